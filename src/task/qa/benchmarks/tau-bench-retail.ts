import { tauBenchmark } from "./tau-bench.ts";

/** τ-bench retail: orders, products and users of an online shop; 115 test, 500 train and 20 dev tasks. */
export const tauBenchRetail = tauBenchmark({
  domain: "retail",
  files: [
    { name: "data/orders.json", sha256: "2598a12586d28f2d6bd16bc86f4c800029b6af18e0abb5c475ef5c869c11ced1", bytes: 1810945 },
    { name: "data/products.json", sha256: "a9eabcc1a9742c5f5288c2779acce52b9308423383ed24706bbaf0889f762a0f", bytes: 172258 },
    { name: "data/users.json", sha256: "6f4fd104cc5e80b92166c4035315c31532c6cea52a90dcdf18425ee7f87c2b82", bytes: 322932 },
    { name: "wiki.md", sha256: "d539fd2a46a8b8dd2e934ff9ed92f43e9f6b56bc7a718db8d2803ba8ad8f6bf7", bytes: 5718 },
    {
      name: "tasks_test.py",
      split: "test",
      sha256: "6f09468923c6cfb6162e94fe659264d6aee70816c18d51278fb4a581db7765a4",
      bytes: 169476,
    },
    {
      name: "tasks_train.py",
      split: "train",
      sha256: "30880ce4e8d524dd0fdd18c1d3a5713551fc8638e82673de3e0fd1ab70046c6f",
      bytes: 471974,
    },
    {
      name: "tasks_dev.py",
      split: "validation",
      sha256: "87dfe578d0271e7b0b5dfb40621a5c0dcc0e8452a75b8f3f8d1dcf0abac4ff14",
      bytes: 19326,
    },
  ],
  sizes: { train: 500, validation: 20, test: 115 },
});
