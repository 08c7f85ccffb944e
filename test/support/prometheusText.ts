/** One sample of the Prometheus text exposition format: `name{label="value",…} 12.5`. */
export interface PrometheusSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface PrometheusExposition {
  /** `# TYPE` of each metric family. */
  types: Record<string, string>;
  samples: PrometheusSample[];
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?$/;
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(?:,|$)/y;

/**
 * A small, strict reader of the text format (version 0.0.4): every line is a comment, blank, or a
 * sample whose labels are quoted with `\\`, `\"` and `\n` escapes. A line it cannot read throws,
 * so a test fails on output a Prometheus server would refuse.
 */
export function parsePrometheusText(text: string): PrometheusExposition {
  const types: Record<string, string> = {};
  const samples: PrometheusSample[] = [];
  for (const [index, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const type = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
      if (type) types[type[1]!] = type[2]!;
      else if (!/^# HELP \S+/.test(line)) throw new Error(`line ${index + 1} is not a HELP or TYPE comment: ${line}`);
      continue;
    }
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`line ${index + 1} is not a sample: ${line}`);
    const value = numberOf(match[3]!);
    if (value === null) throw new Error(`line ${index + 1} has no number: ${line}`);
    samples.push({ name: match[1]!, labels: parseLabels(match[2] ?? '', index + 1), value });
  }
  return { types, samples };
}

/** As Prometheus reads a value (Go's ParseFloat): NaN and Inf in any case, with a sign or not. */
function numberOf(text: string): number | null {
  if (/^nan$/i.test(text)) return Number.NaN;
  if (/^[+-]?inf$/i.test(text)) return text.startsWith('-') ? -Infinity : Infinity;
  const value = Number(text);
  return text.trim() === '' || Number.isNaN(value) ? null : value;
}

function parseLabels(text: string, line: number): Record<string, string> {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const match = LABEL.exec(text);
    if (!match) throw new Error(`line ${line} has malformed labels: {${text}}`);
    labels[match[1]!] = match[2]!.replace(/\\(.)/g, (_, escaped: string) => (escaped === 'n' ? '\n' : escaped));
  }
  return labels;
}

/** The value of the one sample named `name` whose labels include `labels`; undefined when none. */
export function sampleValue(exposition: PrometheusExposition, name: string, labels: Record<string, string> = {}): number | undefined {
  const found = exposition.samples.filter(
    (sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return found[0]?.value;
}
