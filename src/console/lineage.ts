/** A candidate's place in the lineage: what `parentOf` and `childCount` need to know about it. */
export interface Placed {
  id: string;
  round: number;
  status: string;
  commit_sha: string | null;
  parent_commit: string;
}

/**
 * Who descends from whom, from two small aggregates rather than a row per candidate: a candidate's parent is the
 * earliest candidate (lowest id) holding the commit it was proposed from, unless that is itself (the seed); a
 * commit nobody holds makes its candidates roots. `holders` maps each parent commit to that candidate, `groups`
 * each parent commit to how many candidates were proposed from it.
 */
export class Lineage {
  constructor(
    private readonly holders: Map<string, { id: string; parent_commit: string }>,
    private readonly groups: Map<string, number>,
  ) {}

  parentOf(c: Placed): string | null {
    const h = this.holders.get(c.parent_commit);
    return h && h.id !== c.id ? h.id : null;
  }

  /** How many candidates have `c` as their parent. */
  childCount(c: Placed): number {
    if (!c.commit_sha || this.holders.get(c.commit_sha)?.id !== c.id) return 0;
    return (this.groups.get(c.commit_sha) ?? 0) - (c.parent_commit === c.commit_sha ? 1 : 0);
  }

  /** The commit whose candidates are `c`'s children, or null when it has none. */
  childrenCommit(c: Placed): string | null {
    return this.childCount(c) > 0 ? c.commit_sha : null;
  }

  /** What makes a root: proposed from a commit nobody holds, or holding the commit it was proposed from. */
  roots(): { orphanCommits: string[]; selfParented: string[]; total: number } {
    const orphanCommits = [...this.groups.keys()].filter((commit) => !this.holders.has(commit));
    const selfParented = [...this.holders.entries()].filter(([commit, h]) => h.parent_commit === commit).map(([, h]) => h.id);
    const total = orphanCommits.reduce((n, commit) => n + (this.groups.get(commit) ?? 0), 0) + selfParented.length;
    return { orphanCommits, selfParented, total };
  }
}
