import { agentHue, fmtMs } from '../lib/dom.js';
import { frame, linear, niceTicks, s } from './svg.js';

const LABEL_W = 96;
const ROW_H = 30;
const BAR_H = 16;
const CHAR_W = 6.6; // approximate width of a tick-sized glyph, to decide where a label fits

/**
 * A workflow's steps as a Gantt chart: one lane per agent (in order of first appearance), one bar per
 * step from its input's timestamp to its output's, labelled with the message type and duration.
 * A step still being worked on (`live: true`) is drawn dashed up to `end` (`label`, `cls` override its
 * text and class, e.g. for the step a timed-out workflow never got); the workflow's finish and
 * (when close enough to matter) its deadline are vertical markers.
 */
export function drawTimeline(container, { steps, start, end, finishedAt, status, deadline }) {
  const lanes = [];
  for (const st of steps) if (!lanes.includes(st.agent)) lanes.push(st.agent);
  const height = 16 + Math.max(1, lanes.length) * ROW_H + 26;
  const total = Math.max(1, end - start);
  const label = `Timeline: ${steps.filter((st) => !st.live).length} steps by ${lanes.length} agents over ${fmtMs(total)}`;
  const { svg, width } = frame(container, height, label);
  const x = linear([0, total], [LABEL_W, width - 16]);
  const axisY = height - 22;

  for (const t of niceTicks(0, total, Math.max(2, Math.floor((width - LABEL_W) / 90)))) {
    const xx = Math.round(x(t)) + 0.5;
    svg.append(
      s('line', { x1: xx, x2: xx, y1: 8, y2: axisY, class: 'grid' }),
      s('text', { x: xx, y: height - 6, class: 'tick', 'text-anchor': 'middle' }, fmtMs(t)),
    );
  }
  lanes.forEach((agent, i) => {
    const yy = 16 + i * ROW_H;
    svg.append(
      s('rect', { x: 0, y: yy - 6, width, height: ROW_H, class: i % 2 ? 'lane lane-odd' : 'lane' }),
      s('text', { x: 8, y: yy + BAR_H / 2 - 1, class: 'lane-label', 'dominant-baseline': 'middle', style: `--hue:${agentHue(agent)}` }, agent),
    );
  });

  for (const st of steps) {
    const row = lanes.indexOf(st.agent);
    const y0 = 16 + row * ROW_H - 1;
    const a = Date.parse(st.started_at) - start;
    const b = (st.live ? end : Date.parse(st.finished_at)) - start;
    const x0 = x(Math.max(0, a));
    const x1 = Math.max(x0, x(Math.max(0, b)));
    const dur = st.live ? b - a : st.duration_ms;
    const text = st.label ?? (st.live ? `${st.message_type ?? 'working'}…` : `${st.message_type} · ${fmtMs(dur)}${st.attempt > 1 ? ` · attempt ${st.attempt}` : ''}`);
    const title = `${st.agent} ${st.message_type ?? ''} ${st.live ? 'in progress' : st.status} — ${fmtMs(dur)} (from +${fmtMs(a)})`;
    const cls = `bar ${st.live ? 'bar-live' : ''} ${st.status === 'error' ? 'bar-error' : ''} ${st.cls ?? ''}`;
    const g = s('g', { class: 'step', 'data-agent': st.agent, 'data-type': st.message_type ?? '', 'data-duration': Math.round(dur) }, s('title', {}, title));
    if (!st.live && x1 - x0 < 3) {
      const cx = x0;
      const cy = y0 + BAR_H / 2;
      g.append(s('polygon', { points: `${cx},${cy - 7} ${cx + 7},${cy} ${cx},${cy + 7} ${cx - 7},${cy}`, class: cls, style: `--hue:${agentHue(st.agent)}` }));
    } else {
      g.append(s('rect', { x: x0, y: y0, width: Math.max(2, x1 - x0), height: BAR_H, rx: 4, class: cls, style: `--hue:${agentHue(st.agent)}` }));
    }
    const need = text.length * CHAR_W + 8;
    if (x1 + need <= width - 4) g.append(s('text', { x: x1 + 8, y: y0 + BAR_H / 2, class: 'bar-label', 'dominant-baseline': 'middle' }, text));
    else if (x0 - need >= LABEL_W) g.append(s('text', { x: x0 - 8, y: y0 + BAR_H / 2, class: 'bar-label', 'text-anchor': 'end', 'dominant-baseline': 'middle' }, text));
    else g.append(s('text', { x: x0 + 6, y: y0 + BAR_H / 2, class: 'bar-label bar-label-inside', 'dominant-baseline': 'middle' }, text));
    svg.append(g);
  }

  if (finishedAt) marker(svg, x(finishedAt - start), axisY, `${status.replace('_', ' ')} +${fmtMs(finishedAt - start)}`, `status-${status}`);
  if (deadline && deadline - start <= total * 1.02) marker(svg, x(Math.min(total, deadline - start)), axisY, 'deadline', 'marker-deadline');
  container.replaceChildren(svg);
}

function marker(svg, xx, axisY, text, tone) {
  svg.append(
    s('line', { x1: xx, x2: xx, y1: 4, y2: axisY, class: `marker ${tone}` }),
    s('text', { x: xx - 4, y: axisY - 4, class: `tick marker-label ${tone}`, 'text-anchor': 'end' }, text),
  );
}
