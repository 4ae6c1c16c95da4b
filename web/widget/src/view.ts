import { h, icon, ICONS } from './dom.js';
import { css } from './styles.js';

/**
 * The widget's markup inside its shadow root. Every control is a <button> with an accessible name; the conversation
 * is a role=log region, the call status a role=status line, the captions an aria-live region.
 */
export function createView() {
  return {
    launcher: h(
      'button',
      { class: 'launcher', type: 'button', 'aria-expanded': 'false', 'aria-label': 'Open assistant' },
      icon(ICONS.chat),
    ),
    panel: h('section', { class: 'panel', hidden: true, 'aria-label': 'Assistant' }),
    title: h('h2', {}, 'Assistant'),
    close: h('button', { type: 'button', 'aria-label': 'Close assistant' }, icon(ICONS.close)),
    log: h('div', { class: 'log', role: 'log', 'aria-live': 'polite', 'aria-relevant': 'additions' }),
    voice: h('div', { class: 'voice' }),
    dot: h('span', { class: 'dot', 'aria-hidden': 'true' }),
    status: h('span', { class: 'status', role: 'status' }),
    level: h('meter', { class: 'level', min: '0', max: '1', value: '0', 'aria-label': 'Microphone level' }),
    start: h('button', { type: 'button' }, 'Start voice call'),
    mute: h('button', { type: 'button', class: 'ghost', 'aria-pressed': 'false', hidden: true }, 'Mute microphone'),
    end: h('button', { type: 'button', hidden: true }, 'End call'),
    captions: h('div', { class: 'captions', 'aria-live': 'polite', 'aria-label': 'Captions' }),
    consent: h('div', { class: 'consent', role: 'group', 'aria-label': 'Recording consent', hidden: true }),
    agree: h('button', { type: 'button' }, 'Agree and start call'),
    decline: h('button', { type: 'button', class: 'ghost' }, 'Cancel'),
    form: h('form', {}),
    input: h('input', {
      type: 'text',
      name: 'message',
      autocomplete: 'off',
      maxlength: '4000',
      'aria-label': 'Message',
      placeholder: 'Type a message…',
    }),
    send: h('button', { type: 'submit' }, 'Send'),
  };
}

export type View = ReturnType<typeof createView>;

let sheet: CSSStyleSheet | undefined;

/** Lays the view out in the shadow root, styled by one constructable stylesheet shared by every instance. */
export function mountView(root: ShadowRoot, u: View): void {
  if (sheet === undefined) {
    sheet = new CSSStyleSheet();
    sheet.replaceSync(css);
  }
  root.adoptedStyleSheets = [sheet];
  u.consent.append(
    h('p', {}, 'This call is recorded. Do you agree to the recording?'),
    h('div', { class: 'row' }, u.agree, u.decline),
  );
  u.voice.append(h('div', { class: 'row' }, u.dot, u.status, u.level, u.start, u.mute, u.end), u.consent, u.captions);
  u.form.append(u.input, u.send);
  u.panel.append(h('header', {}, u.title, u.close), u.log, u.voice, u.form);
  root.append(u.panel, u.launcher);
}
