import type { ShowRunOutput } from '../../application/runs/ShowRun.js';
import type { RunTranscript, TranscriptEntry } from '../../domain/runs/RunTranscript.js';
import { wallClockWithSeconds } from './formatJobDetails.js';

/** `text` with each line indented by `by`. */
function indented(text: string, by: string): string[] {
  return text.split('\n').map((line) => `${by}${line}`.trimEnd());
}

/** How long an entry took: `0.4 s`, `12 s`. */
function tookOf(entry: TranscriptEntry): string {
  const ms = Math.max(0, Date.parse(entry.ended_at) - Date.parse(entry.started_at));
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}

function entryLines(entry: TranscriptEntry, timeZone: string): string[] {
  const at = wallClockWithSeconds(new Date(entry.started_at), timeZone);
  if (entry.type === 'model_turn') {
    const usage = entry.usage
      ? `, ${entry.usage.input_tokens.toLocaleString('en-US')} tokens in, ${entry.usage.output_tokens.toLocaleString('en-US')} out` +
        (entry.usage.cached_input_tokens > 0 ? ` (${entry.usage.cached_input_tokens.toLocaleString('en-US')} cached)` : '')
      : '';
    const lines = [`${at}  model turn, ${entry.model} (${tookOf(entry)}${usage})`];
    if (entry.text !== '') lines.push(...indented(entry.text, '    '));
    for (const call of entry.tool_calls) lines.push(`    calls ${call.name} ${call.arguments}`);
    return lines;
  }
  const lines = [`${at}  tool ${entry.name}${entry.is_error ? ', failed' : ''} (${tookOf(entry)})`];
  lines.push(`    arguments: ${entry.arguments}`);
  lines.push(`    result${entry.cut ? ` (${entry.cut})` : ''}:`);
  lines.push(...indented(entry.result === '' ? '(empty)' : entry.result, '      '));
  return lines;
}

/** The human layout of `agent runs show`: the run's fields, then its transcript, one block per entry. */
export function runShowLines({ run, transcript }: ShowRunOutput, timeZone: string): string[] {
  const when = (iso: string | null) => (iso === null ? '-' : `${wallClockWithSeconds(new Date(iso), timeZone)} (${timeZone})`);
  const lines = [
    `Run ${run.id}`,
    `  kind:      ${run.kind}`,
    `  ${run.kind === 'cron' ? 'job' : 'route'}:       ${run.kind === 'cron' ? `${run.subject} '${run.name}'` : run.subject}`,
    `  status:    ${run.status}`,
    `  started:   ${when(run.started_at)}`,
    `  finished:  ${when(run.finished_at)}`,
    `  model:     ${run.model ?? '-'}`,
  ];
  if (run.error) lines.push(`  error:     ${run.error}`);
  for (const delivery of run.deliveries) {
    lines.push(`  delivery:  ${delivery.target}: ${delivery.outcome}${delivery.error ? ` (${delivery.error})` : ''}`);
  }
  if (run.prompt !== null) lines.push('', 'Prompt:', ...indented(run.prompt, '  '));
  lines.push('', ...transcriptLines(transcript, timeZone));
  if (run.answer !== null) lines.push('', 'Answer:', ...indented(run.answer, '  '));
  return lines;
}

function transcriptLines(transcript: RunTranscript | null, timeZone: string): string[] {
  if (transcript === null || transcript.length === 0)
    return ['No transcript (the run kept none: a command agent, a script, or a run from before transcripts).'];
  const turns = transcript.filter((entry) => entry.type === 'model_turn').length;
  const calls = transcript.length - turns;
  return [
    `Transcript (${turns} model turn${turns === 1 ? '' : 's'}, ${calls} tool call${calls === 1 ? '' : 's'}; times in ${timeZone}):`,
    ...transcript.flatMap((entry) => entryLines(entry, timeZone).map((line) => `  ${line}`.trimEnd())),
  ];
}
