import { Link, runUrl } from "../router.tsx";

/**
 * What every page shows when what it asked for is not there: the server's message and a way back, to the run it
 * belongs to when there is one, and always to the list of runs.
 */
export function ErrorPage({ message, run, title = "Not found" }: { message: string; run?: string; title?: string }) {
  return (
    <section className="error-page" data-testid="error-page">
      <h1>{title}</h1>
      <p className="error">{message}</p>
      <p className="back">
        {run && (
          <>
            <Link to={runUrl(run)}>← back to run {run}</Link> ·{" "}
          </>
        )}
        <Link to="/">← all runs</Link>
      </p>
    </section>
  );
}
