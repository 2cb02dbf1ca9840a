import { type ReactElement, StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { ErrorPage } from "./components/ErrorPage.tsx";
import { PageBoundary } from "./components/PageBoundary.tsx";
import { CandidatePage } from "./pages/Candidate.tsx";
import { ComparePage } from "./pages/Compare.tsx";
import { GridPage } from "./pages/Grid.tsx";
import { RolloutPage } from "./pages/Rollout.tsx";
import { RunPage } from "./pages/Run.tsx";
import { RunsPage } from "./pages/Runs.tsx";
import { Link, usePath } from "./router.tsx";
import "./styles.css";

/** The path's segments decoded, or null for a hand-typed or cut-off address with a broken %-escape. */
function decodeParts(path: string): string[] | null {
  try {
    return path.split("/").filter(Boolean).map(decodeURIComponent);
  } catch {
    return null;
  }
}

function App() {
  const { path, search } = usePath();
  const parts = decodeParts(path);
  let page: ReactElement;
  if (parts === null) page = <ErrorPage message={`There is no page at ${path} (it is not a well-formed address).`} />;
  else if (parts[0] === "run" && parts[1] && parts[2] === "candidate" && parts[3])
    page = <CandidatePage run={parts[1]} id={parts[3]} />;
  else if (parts[0] === "run" && parts[1] && parts[2] === "rollout" && parts[3])
    page = <RolloutPage run={parts[1]} id={parts[3]} />;
  else if (parts[0] === "run" && parts[1] && parts.length === 2) page = <RunPage id={parts[1]} />;
  else if (parts[0] === "compare" && parts.length === 1) page = <ComparePage ids={search.getAll("run")} />;
  else if (parts[0] === "grid" && parts.length === 1) page = <GridPage id={search.get("experiment") ?? ""} />;
  else if (parts.length === 0) page = <RunsPage />;
  else page = <ErrorPage message={`There is no page at ${path}.`} run={parts[0] === "run" && parts[1] ? parts[1] : undefined} />;
  return (
    <>
      <header>
        <Link to="/" className="brand">
          hone
        </Link>
        <span className="muted">view</span>
      </header>
      <main key={path}>
        <PageBoundary run={parts?.[0] === "run" && parts[1] && parts.length > 2 ? parts[1] : undefined}>{page}</PageBoundary>
      </main>
    </>
  );
}

const root = document.getElementById("root");
if (root)
  createRoot(root).render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
