import { Table } from './components.js';

/**
 * A small bar chart: bars as inline SVG stretched to the width (no library, no inline style: CSP-safe), labels in
 * HTML so they never stretch, and a table twin for screen readers and exact values.
 */
export function BarChart(props: {
  title: string;
  labels: string[];
  values: number[];
  format: (v: number) => string;
  unit: string;
}) {
  const { labels, values } = props;
  const max = Math.max(...values, 0);
  const w = 640;
  const h = 160;
  const bw = labels.length > 0 ? w / labels.length : 0;
  return (
    <figure class="chart">
      <figcaption>{props.title}</figcaption>
      <div class="chart-max" aria-hidden="true">
        {props.format(max)}
      </div>
      <svg
        viewBox={`0 0 ${w} ${h}`}
        preserveAspectRatio="none"
        role="img"
        aria-label={`${props.title}: peak ${props.format(max)} ${props.unit}`}
      >
        <line x1={0} y1={h} x2={w} y2={h} class="axis" />
        {values.map((v, i) => {
          const bh = max > 0 ? (v / max) * (h - 4) : 0;
          return (
            <rect x={i * bw + 1} y={h - bh} width={Math.max(1, bw - 2)} height={bh} class="bar">
              <title>{`${labels[i]}: ${props.format(v)} ${props.unit}`}</title>
            </rect>
          );
        })}
      </svg>
      <div class="chart-axis" aria-hidden="true">
        <span>{labels[0] ?? ''}</span>
        <span>{labels[labels.length - 1] ?? ''}</span>
      </div>
      <details>
        <summary>Show as a table</summary>
        <Table columns={['Day', props.unit]}>
          {labels.map((l, i) => (
            <tr>
              <td>{l}</td>
              <td>{props.format(values[i] ?? 0)}</td>
            </tr>
          ))}
        </Table>
      </details>
    </figure>
  );
}
