import type { RunTranscript, TranscriptEntry } from '../../domain/runs/RunTranscript.js';
import { wallClockAt } from '../../domain/zonedTime.js';
import type { RunRecord } from '../../domain/runs/RunRecord.js';
import { html, type Html } from './html.js';

/** `HH:MM:SS` of an instant in `timeZone`. */
function clock(iso: string, timeZone: string): string {
  const c = wallClockAt(new Date(iso), timeZone);
  return [c.hour, c.minute, c.second].map((part) => String(part).padStart(2, '0')).join(':');
}

function took(entry: TranscriptEntry): string {
  return `${(Math.max(0, Date.parse(entry.ended_at) - Date.parse(entry.started_at)) / 1000).toFixed(1)} s`;
}

function entryItem(entry: TranscriptEntry, timeZone: string): Html {
  const at = html`<time datetime="${entry.started_at}">${clock(entry.started_at, timeZone)}</time>`;
  if (entry.type === 'model_turn') {
    const usage = entry.usage ? `, ${entry.usage.input_tokens} tokens in, ${entry.usage.output_tokens} out` : '';
    const asks = entry.tool_calls.map((call) => call.name).join(', ');
    return html`<li class="turn">${at} <b>Model turn</b> <span class="muted">${entry.model} (${took(entry)}${usage})</span>
${entry.text !== '' ? html`<pre>${entry.text}</pre>` : null}${asks ? html`<p>Calls ${asks}</p>` : null}</li>`;
  }
  return html`<li class="tool">${at} <details id="call-${entry.call_id}"><summary><b>Tool ${entry.name}</b>${entry.is_error ? ' (failed)' : ''} <span class="muted">(${took(entry)})</span></summary>
<p>Arguments</p><pre>${entry.arguments}</pre>
<p>Result${entry.cut ? html` <span class="muted">(${entry.cut})</span>` : null}</p><pre>${entry.result}</pre>
</details></li>`;
}

/**
 * A run's transcript as a timeline (docs/runs.md, Transcripts): each model turn with its text and
 * the tools it called, each tool call collapsed (`<details>`) to its name, opened to its arguments
 * and result. Server-rendered, no script.
 */
export function transcriptTimeline(transcript: RunTranscript | null, timeZone: string, run?: RunRecord): Html {
  const deliveries = run ? deliveryItems(run, timeZone) : [];
  if (transcript === null || transcript.length === 0) {
    const yet = run?.status === 'running' ? ', or it has not ended a model turn yet' : '';
    return html`<h2>Transcript</h2><p class="muted">None: the run kept no transcript (a command agent, a script, or a run from before transcripts${yet}).</p>
${deliveries.length > 0 ? html`<ol class="timeline">${deliveries}</ol>` : null}`;
  }
  return html`<h2>Transcript</h2>
<p class="muted">Times in ${timeZone}; open a tool call for its arguments and result.</p>
<ol class="timeline">${transcript.map((entry) => entryItem(entry, timeZone))}${deliveries}</ol>`;
}

/** Each delivery of the run's answer, as the timeline's last entries: its target, outcome, message ids or error. */
function deliveryItems(run: RunRecord, timeZone: string): Html[] {
  const at = run.redelivered_at ?? run.finished_at;
  const time = at ? html`<time datetime="${at}">${clock(at, timeZone)}</time> ` : null;
  return run.deliveries.map(
    (each) =>
      html`<li class="delivery">${time}<b>Delivery to ${each.target}</b> <span class="muted">(${each.outcome})</span>${each.message_ids.length > 0 ? html`<p>Message ids: ${each.message_ids.join(', ')}</p>` : null}${each.error ? html`<p class="problem">${each.error}</p>` : null}</li>`,
  );
}
