/** A small bar chart as inline SVG (no library, no inline style: CSP-safe), with a table twin for screen readers. */
export function BarChart(props: { title: string; labels: string[]; values: number[]; format: (v: number) => string; unit: string }) {
  const { labels, values } = props;
  const max = Math.max(...values, 0);
  const w = 640;
  const h = 160;
  const pad = 24;
  const bw = labels.length > 0 ? (w - pad) / labels.length : 0;
  return (
    <figure class="chart">
      <figcaption>{props.title}</figcaption>
      <svg viewBox={`0 0 ${w} ${h + pad}`} role="img" aria-label={`${props.title}: peak ${props.format(max)} ${props.unit}`} preserveAspectRatio="none">
        <line x1={pad} y1={h} x2={w} y2={h} class="axis" />
        {values.map((v, i) => {
          const bh = max > 0 ? (v / max) * (h - 8) : 0;
          return (
            <rect x={pad + i * bw + 1} y={h - bh} width={Math.max(1, bw - 2)} height={bh} class="bar">
              <title>{`${labels[i]}: ${props.format(v)} ${props.unit}`}</title>
            </rect>
          );
        })}
        <text x={pad} y={h + 16} class="tick">
          {labels[0] ?? ''}
        </text>
        <text x={w} y={h + 16} class="tick" text-anchor="end">
          {labels[labels.length - 1] ?? ''}
        </text>
        <text x={0} y={12} class="tick">
          {props.format(max)}
        </text>
      </svg>
      <details>
        <summary>Show as a table</summary>
        <table>
          <thead>
            <tr>
              <th scope="col">Day</th>
              <th scope="col">{props.unit}</th>
            </tr>
          </thead>
          <tbody>
            {labels.map((l, i) => (
              <tr>
                <td>{l}</td>
                <td>{props.format(values[i] ?? 0)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
