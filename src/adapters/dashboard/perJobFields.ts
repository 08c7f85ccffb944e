import { html, type Html } from './html.js';

/** The job form's fields of a job's own toolsets, working folder, answers carried forward and the jobs it runs after (docs/dashboard.md). */
export interface PerJobFormValues {
  /** Toolsets instead of the agent-cron preset, comma-separated; empty for the preset. */
  toolsets: string;
  /** The working folder; empty for the workspace. */
  workdir: string;
  /** Jobs (names or ids) whose last ok answer each run is given, comma-separated. */
  context_from: string;
  /** Whether each run is given the job's own last ok answer. */
  continue: boolean;
  /** The jobs (names or ids) whose runs' ends start it, each `job[:ok|failed|any]`, comma-separated (docs/cron.md, Chains). */
  after: string;
}

export function perJobFormFields(values: PerJobFormValues): Html {
  return html`<label>Toolsets<input name="toolsets" type="text" value="${values.toolsets}" placeholder="agent-cron (the preset), or comma-separated: terminal, web, …"></label>
<label>Working folder<input name="workdir" type="text" value="${values.workdir}" placeholder="the workspace, or a folder that exists (its AGENTS.md is read)"></label>
<label>Context from<input name="context_from" type="text" value="${values.context_from}" placeholder="jobs whose last ok answer each run is given, comma-separated"></label>
<label>Runs after<input name="after" type="text" value="${values.after}" placeholder="jobs whose run's end starts this one: name, name:failed or name:any, comma-separated"></label>
<label><input name="continue" type="checkbox" value="yes"${values.continue ? html` checked` : null}> Give each run this job's own last ok answer (cut to 8 KB)</label>`;
}
