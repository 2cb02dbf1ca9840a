import { Component, type ReactNode } from "react";
import { ErrorPage } from "./ErrorPage.tsx";

/**
 * What a page shows when drawing it fails (a record of a run folder from someone else holding what no page expects):
 * the error and the way back, never a blank window. Keyed by the page's path, so the next page starts afresh.
 */
export class PageBoundary extends Component<{ children: ReactNode; run?: string }, { error: Error | null }> {
  state = { error: null as Error | null };

  static getDerivedStateFromError(error: Error) {
    return { error };
  }

  render() {
    if (!this.state.error) return this.props.children;
    return (
      <ErrorPage
        title="This page could not be drawn"
        message={`Its records hold something this page cannot show (${String(this.state.error.message).slice(0, 300)}).`}
        run={this.props.run}
      />
    );
  }
}
