/** The few rules of the run pages (docs/dashboard.md, Runs), appended to the dashboard's style sheet. */
export const RUNS_CSS = `
form.filters { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: end; margin-bottom: .6rem; }
form.filters label { display: grid; gap: .15rem; font-weight: 600; }
ol.timeline > li.delivery { border-left: 3px solid var(--line); }
section.actions { margin: .6rem 0 1rem; }
`;
