/**
 * <parley-assistant>: chat and realtime voice with one Parley assistant, from any page.
 *
 *   <script src="https://parley.example.com/widget/v1/parley.js" async></script>
 *   <parley-assistant assistant-id="asst_..."></parley-assistant>
 *
 * Attributes: assistant-id (required), server (default: the script's origin), mode (chat | voice | both; default
 * from the widget config), visitor-id (default: a random id kept in localStorage), signature (from
 * POST /api/v1/widget/sign, sent as X-Parley-Signature), open (start expanded), position="inline" (no launcher).
 * API: startVoice(), endVoice(), sendMessage(text), open(), close().
 * Events (bubbling, composed): parley:state {voice}, parley:message {role, text, final}, parley:ended {endReason},
 * parley:error {code, message}.
 */
import { createParleyClient, ParleyError, streamChat, VoiceCall, type ParleyClient, type SuccessBody, type Operation } from '../../../sdk/src/index.js';
import { AudioSession, AudioStartError, createAudioContext } from './audio/session.js';
import { h, icon, ICONS, joinText } from './dom.js';
import { endMessages, errorMessages, stateLabels, visibleEndReason } from './messages.js';
import { css } from './styles.js';
import { TestHook } from './test-hook.js';

type WidgetConfig = SuccessBody<Operation<'/api/v1/widget/{publicId}/config', 'get'>>;
type Source = { documentId: string; name: string; snippet: string; score: number };
export type VoiceState = 'idle' | 'connecting' | 'listening' | 'thinking' | 'speaking' | 'reconnecting' | 'ended' | 'error';
type Mode = 'chat' | 'voice' | 'both';

const VISITOR_KEY = 'parley:visitor-id';
let sheet: CSSStyleSheet | undefined;

/** Where parley.js came from: the default `server`, and where the audio worklet module is loaded from. */
export const scriptBase = { origin: '', audioUrl: '' };

export class ParleyAssistant extends HTMLElement {
  static get observedAttributes(): string[] {
    return ['open', 'mode', 'assistant-id', 'server'];
  }

  private readonly root: ShadowRoot;
  private config: WidgetConfig | undefined;
  private configLoading: Promise<WidgetConfig | undefined> | undefined;
  private conversationId: string | undefined;
  private voiceUnavailable = false;
  private call: VoiceCall | undefined;
  private audio: AudioSession | undefined;
  private voiceState: VoiceState = 'idle';
  private gateOpen = false;
  private caption: { role: 'user' | 'assistant'; text: string; line: HTMLElement } | undefined;
  private consentAnswer: ((yes: boolean) => void) | undefined;
  private micMuted = false;
  private visitorCache: string | undefined;
  private chatBusy = false;
  private tapTimer: ReturnType<typeof setInterval> | undefined;
  /** Present only with a data-test attribute: what the browser tests read (see README, Testing). */
  parleyTest: TestHook | undefined;

  private readonly ui = {
    launcher: h('button', { class: 'launcher', type: 'button', 'aria-expanded': 'false', 'aria-label': 'Open assistant' }, icon(ICONS.chat)),
    panel: h('section', { class: 'panel', hidden: true, 'aria-label': 'Assistant' }),
    title: h('h2', {}, 'Assistant'),
    close: h('button', { type: 'button', 'aria-label': 'Close assistant' }, icon(ICONS.close)),
    log: h('div', { class: 'log', role: 'log', 'aria-live': 'polite', 'aria-relevant': 'additions' }),
    voice: h('div', { class: 'voice' }),
    dot: h('span', { class: 'dot', 'aria-hidden': 'true' }),
    status: h('span', { class: 'status', role: 'status' }),
    start: h('button', { type: 'button' }, 'Start voice call'),
    mute: h('button', { type: 'button', class: 'ghost', 'aria-pressed': 'false', hidden: true }, 'Mute microphone'),
    end: h('button', { type: 'button', hidden: true }, 'End call'),
    captions: h('div', { class: 'captions', 'aria-live': 'polite', 'aria-label': 'Captions' }),
    consent: h('div', { class: 'consent', role: 'group', 'aria-label': 'Recording consent', hidden: true }),
    form: h('form', {}),
    input: h('input', { type: 'text', name: 'message', autocomplete: 'off', maxlength: '4000', 'aria-label': 'Message', placeholder: 'Type a message…' }),
    send: h('button', { type: 'submit' }, 'Send'),
  };

  constructor() {
    super();
    this.root = this.attachShadow({ mode: 'open' });
    sheet ??= (() => {
      const s = new CSSStyleSheet();
      s.replaceSync(css);
      return s;
    })();
    this.root.adoptedStyleSheets = [sheet];
    const u = this.ui;
    const yes = h('button', { type: 'button' }, 'Agree and start call');
    const no = h('button', { type: 'button', class: 'ghost' }, 'Cancel');
    u.consent.append(h('p', {}, 'This call is recorded. Do you agree to the recording?'), h('div', { class: 'row' }, yes, no));
    yes.addEventListener('click', () => this.answerConsent(true));
    no.addEventListener('click', () => this.answerConsent(false));
    u.voice.append(h('div', { class: 'row' }, u.dot, u.status, u.start, u.mute, u.end), u.consent, u.captions);
    u.form.append(u.input, u.send);
    u.panel.append(h('header', {}, u.title, u.close), u.log, u.voice, u.form);
    this.root.append(u.panel, u.launcher);
    u.launcher.addEventListener('click', () => (this.isOpen ? this.close() : this.open()));
    u.close.addEventListener('click', () => this.close());
    u.start.addEventListener('click', () => void this.startVoice());
    u.end.addEventListener('click', () => void this.endVoice());
    u.mute.addEventListener('click', () => this.toggleMute());
    u.form.addEventListener('submit', (event) => {
      event.preventDefault();
      const text = u.input.value;
      if (text.trim() !== '' && !this.chatBusy) {
        u.input.value = '';
        void this.sendMessage(text);
      }
    });
    this.root.addEventListener('keydown', (event) => {
      if ((event as KeyboardEvent).key === 'Escape' && this.isOpen && !this.hasAttribute('position')) this.close();
    });
  }

  connectedCallback(): void {
    if (this.hasAttribute('data-test')) this.parleyTest ??= new TestHook();
    this.renderOpen();
    this.renderMode();
    void this.loadConfig();
    addEventListener('pagehide', this.onPageHide);
  }

  disconnectedCallback(): void {
    removeEventListener('pagehide', this.onPageHide);
    if (this.call !== undefined) void this.endVoice();
  }

  attributeChangedCallback(name: string): void {
    if (name === 'open') this.renderOpen();
    if (name === 'mode') this.renderMode();
    if ((name === 'assistant-id' || name === 'server') && this.isConnected) {
      this.config = undefined;
      this.configLoading = undefined;
      void this.loadConfig();
    }
  }

  // ---- public API ---------------------------------------------------------------------------------------------

  /** Expands the widget. */
  open(): void {
    this.setAttribute('open', '');
  }

  /** Collapses the widget (a running call goes on). */
  close(): void {
    this.removeAttribute('open');
  }

  /** Sends a chat message and streams the answer into the conversation. Resolves when the answer is complete. */
  async sendMessage(text: string): Promise<void> {
    const message = text.trim();
    if (message === '') return;
    this.addMessage('user', message);
    this.emit('parley:message', { role: 'user', text: message, final: true });
    const config = await this.loadConfig();
    if (config === undefined) return;
    this.chatBusy = true;
    this.ui.send.disabled = true;
    const bubble = h('div', { class: 'msg assistant', 'aria-busy': 'true' });
    let answer = '';
    let placed = false;
    const voiceUnavailable = this.voiceUnavailable;
    this.voiceUnavailable = false;
    try {
      for await (const event of streamChat(this.client(), {
        assistantId: this.assistantId,
        message,
        visitorId: this.visitorId,
        source: 'widget',
        ...(this.conversationId !== undefined ? { conversationId: this.conversationId } : {}),
        ...(voiceUnavailable ? { voiceUnavailable: true } : {}),
      })) {
        if (event.type === 'token') {
          answer += event.text;
          if (!placed) this.ui.log.append(bubble), (placed = true);
          bubble.textContent = answer;
          this.scrollLog();
          this.emit('parley:message', { role: 'assistant', text: answer, final: false });
        } else if (event.type === 'meta') {
          this.conversationId = event.conversationId;
          if (!placed) this.ui.log.append(bubble), (placed = true);
          bubble.textContent = answer;
          this.decorateAnswer(bubble, event.messageId, event.sources);
          this.emit('parley:message', { role: 'assistant', text: answer, final: true });
        } else if (event.type === 'error') {
          this.fail(event.code, errorMessages.interrupted);
        }
      }
    } catch (err) {
      this.fail(...this.describe(err));
    } finally {
      bubble.removeAttribute('aria-busy');
      this.chatBusy = false;
      this.ui.send.disabled = false;
    }
  }

  /** Starts a voice call (asks for recording consent first when the assistant records). */
  async startVoice(): Promise<void> {
    if (this.call !== undefined || this.voiceState === 'connecting') return;
    // Created inside the click that called us: browsers let a user gesture start audio.
    const context = createAudioContext();
    this.setVoiceState('connecting');
    const config = await this.loadConfig();
    if (config === undefined || !config.voice.enabled || this.mode === 'chat') {
      void context?.close();
      if (config !== undefined) this.failVoice('VOICE_UNAVAILABLE', errorMessages.voiceUnavailable);
      else this.setVoiceState('error');
      return;
    }
    const recorded = config.voice.recording === 'on';
    if (recorded && !(await this.askConsent())) {
      void context?.close();
      this.setVoiceState('idle');
      return;
    }
    this.micMuted = false;
    const hook = this.parleyTest;
    let audio: AudioSession;
    try {
      audio = await AudioSession.open(context, {
        workletUrl: scriptBase.audioUrl || `${this.server}/widget/v1/parley-audio.js`,
        onFrame: (pcm) => this.call?.sendAudio(pcm),
        tap: hook !== undefined,
      });
    } catch (err) {
      void context?.close();
      const problem = err instanceof AudioStartError ? err.problem : 'unsupported';
      if (problem === 'denied') this.failVoice('MICROPHONE_DENIED', errorMessages.microphoneDenied);
      else if (problem === 'missing') this.failVoice('MICROPHONE_MISSING', errorMessages.microphoneMissing);
      else this.failVoice('AUDIO_UNSUPPORTED', errorMessages.audioUnsupported);
      return;
    }
    this.audio = audio;
    const call = new VoiceCall({
      baseUrl: this.server,
      assistantId: this.assistantId,
      visitorId: this.visitorId,
      source: 'widget',
      capabilities: ['heartbeat', 'playback_gate'],
      recordingConsent: recorded,
      ...(this.signature !== undefined ? { signature: this.signature } : {}),
      ...(this.conversationId !== undefined ? { conversationId: this.conversationId } : {}),
    });
    this.call = call;
    this.gateOpen = false;
    call.on('state', ({ state }) => {
      this.syncGate(call);
      if (state !== 'ended' && state !== 'error') this.setVoiceState(state);
    });
    call.on('gate', () => this.syncGate(call));
    call.on('audio', (pcm) => {
      if (call.isGateOpen) this.audio?.play(pcm);
    });
    call.on('transcript', (t) => {
      // Assistant captions only while the gate is open (the service withholds them too; spec rule 3).
      if (t.role === 'assistant' && !call.isGateOpen) return;
      this.addCaption(t.role, t.text);
    });
    call.on('ended', ({ endReason }) => this.onCallEnded(call, endReason));
    if (hook !== undefined) {
      hook.calls++;
      this.tapTimer = setInterval(() => hook.sample(this.audio?.tapRms()), 50);
    }
    try {
      const minted = await call.start();
      this.conversationId = minted.conversationId;
      if (hook !== undefined) hook.session = { sessionId: minted.sessionId, controlToken: minted.controlToken };
      this.renderCall();
    } catch (err) {
      if (this.call !== call) return;
      this.releaseCall();
      const [code, message] = this.describe(err, true);
      if (code === 'VOICE_UNAVAILABLE') this.voiceUnavailable = true;
      this.failVoice(code, message);
    }
  }

  /** Hangs up. Resolves once the service confirmed the end (or could not be reached). */
  async endVoice(): Promise<void> {
    if (this.consentAnswer !== undefined) this.answerConsent(false);
    await this.call?.end();
  }

  // ---- attributes ---------------------------------------------------------------------------------------------

  get isOpen(): boolean {
    return this.hasAttribute('open');
  }

  private get assistantId(): string {
    return this.getAttribute('assistant-id') ?? '';
  }

  private get server(): string {
    return (this.getAttribute('server') || scriptBase.origin || location.origin).replace(/\/+$/, '');
  }

  private get signature(): string | undefined {
    return this.getAttribute('signature') ?? undefined;
  }

  private get mode(): Mode {
    const attr = this.getAttribute('mode');
    if (attr === 'chat' || attr === 'voice' || attr === 'both') return attr;
    if (this.config !== undefined) return this.config.voice.enabled ? 'both' : 'chat';
    return 'both';
  }

  /** The visitor-id attribute, else a random id kept in localStorage (per page origin), else one per page view. */
  private get visitorId(): string {
    const attr = this.getAttribute('visitor-id');
    if (attr) return attr;
    if (this.visitorCache !== undefined) return this.visitorCache;
    let id: string | null = null;
    try {
      id = localStorage.getItem(VISITOR_KEY);
      if (id === null || !/^[A-Za-z0-9._:-]{8,80}$/.test(id)) {
        id = `v_${crypto.randomUUID()}`;
        localStorage.setItem(VISITOR_KEY, id);
      }
    } catch {
      id ??= `v_${crypto.randomUUID()}`; // storage blocked: this page view only
    }
    this.visitorCache = id;
    return id;
  }

  private client(): ParleyClient {
    return createParleyClient({
      baseUrl: this.server,
      headers: this.signature !== undefined ? { 'x-parley-signature': this.signature } : {},
      onDeprecation: () => undefined,
    });
  }

  // ---- config -------------------------------------------------------------------------------------------------

  private loadConfig(): Promise<WidgetConfig | undefined> {
    if (this.config !== undefined) return Promise.resolve(this.config);
    if (!this.assistantId) {
      this.fail('WIDGET_ASSISTANT_ID_MISSING', errorMessages.unavailable);
      return Promise.resolve(undefined);
    }
    this.configLoading ??= this.client()
      .GET('/api/v1/widget/{publicId}/config', { params: { path: { publicId: this.assistantId } } })
      .then(
        (config) => {
          this.config = config;
          this.ui.title.textContent = config.name;
          if (config.welcomeMessage && this.ui.log.childElementCount === 0) this.addMessage('assistant', config.welcomeMessage);
          this.renderMode();
          return config;
        },
        (err: unknown) => {
          this.configLoading = undefined; // the next action tries again
          this.fail(...this.describe(err));
          this.setVoiceState('error');
          return undefined;
        },
      );
    return this.configLoading;
  }

  // ---- voice internals ----------------------------------------------------------------------------------------

  private askConsent(): Promise<boolean> {
    this.open();
    this.ui.consent.hidden = false;
    this.ui.start.hidden = true;
    (this.ui.consent.querySelector('button') as HTMLButtonElement | null)?.focus();
    return new Promise((resolve) => (this.consentAnswer = resolve));
  }

  private answerConsent(yes: boolean): void {
    const answer = this.consentAnswer;
    this.consentAnswer = undefined;
    this.ui.consent.hidden = true;
    this.renderCall();
    answer?.(yes);
  }

  private syncGate(call: VoiceCall): void {
    const open = call.isGateOpen;
    if (open === this.gateOpen) return;
    this.gateOpen = open;
    this.parleyTest?.record('gate', open ? 'open' : 'closed');
    // Closed: nothing queued may still be heard.
    if (!open) this.audio?.flush();
  }

  private toggleMute(): void {
    if (this.call === undefined) return;
    this.micMuted = !this.micMuted;
    this.audio?.setMuted(this.micMuted);
    if (this.micMuted) this.call.mute();
    else this.call.unmute();
    this.ui.mute.setAttribute('aria-pressed', String(this.micMuted));
    this.ui.mute.textContent = this.micMuted ? 'Unmute microphone' : 'Mute microphone';
  }

  private onCallEnded(call: VoiceCall, endReason: string | null): void {
    if (this.call !== call) return;
    this.releaseCall();
    const visible = visibleEndReason(endReason);
    if (visible === 'voice_unavailable') this.voiceUnavailable = true;
    this.addMessage('notice', endMessages[visible]!);
    this.setVoiceState('ended');
    this.emit('parley:ended', { endReason: visible === 'client' ? null : visible });
  }

  private releaseCall(): void {
    this.finishCaption();
    this.call = undefined;
    this.audio?.close();
    this.audio = undefined;
    this.gateOpen = false;
    clearInterval(this.tapTimer);
    this.ui.captions.textContent = '';
    this.renderCall();
  }

  private readonly onPageHide = (): void => {
    // Page unload: end the call with a keepalive request that outlives the page.
    const call = this.call;
    if (call === undefined) return;
    call.endOnUnload();
  };

  private addCaption(role: 'user' | 'assistant', delta: string): void {
    if (this.caption === undefined || this.caption.role !== role) {
      this.finishCaption();
      const line = h('div', { class: `msg ${role}` });
      this.ui.captions.replaceChildren(line);
      this.caption = { role, text: '', line };
    }
    const caption = this.caption;
    caption.text = joinText(caption.text, delta);
    caption.line.textContent = caption.text;
    this.parleyTest?.record('caption', `${role}:${this.gateOpen ? 'open' : 'closed'}`);
    this.emit('parley:message', { role, text: caption.text, final: false });
  }

  /** The caption that was being spoken is complete: it joins the conversation log. */
  private finishCaption(): void {
    const caption = this.caption;
    if (caption === undefined) return;
    this.caption = undefined;
    this.addMessage(caption.role, caption.text);
    this.emit('parley:message', { role: caption.role, text: caption.text, final: true });
  }

  // ---- rendering ----------------------------------------------------------------------------------------------

  private setVoiceState(state: VoiceState): void {
    if (state === this.voiceState) return;
    this.voiceState = state;
    this.parleyTest?.record('state', state);
    this.ui.status.textContent = stateLabels[state] ?? '';
    this.ui.dot.classList.toggle('on', state === 'listening' || state === 'speaking');
    this.renderCall();
    this.emit('parley:state', { voice: state });
  }

  private renderCall(): void {
    const inCall = this.call !== undefined;
    const asking = this.consentAnswer !== undefined;
    this.ui.start.hidden = inCall || asking;
    this.ui.start.disabled = this.voiceState === 'connecting';
    this.ui.mute.hidden = !inCall;
    this.ui.end.hidden = !inCall;
  }

  private renderOpen(): void {
    const open = this.isOpen || this.getAttribute('position') === 'inline';
    this.ui.panel.hidden = !open;
    this.ui.launcher.setAttribute('aria-expanded', String(open));
    this.ui.launcher.setAttribute('aria-label', open ? 'Close assistant' : 'Open assistant');
  }

  private renderMode(): void {
    const mode = this.mode;
    this.ui.voice.hidden = mode === 'chat';
    this.ui.form.hidden = mode === 'voice';
  }

  private addMessage(kind: 'user' | 'assistant' | 'notice', text: string, error = false): HTMLElement {
    const el = h('div', { class: `msg ${kind}${error ? ' error' : ''}` }, text);
    this.ui.log.append(el);
    this.scrollLog();
    return el;
  }

  private scrollLog(): void {
    this.ui.log.scrollTop = this.ui.log.scrollHeight;
  }

  /** Sources under an answer, and the two feedback buttons. */
  private decorateAnswer(bubble: HTMLElement, messageId: string, sources: Source[]): void {
    if (sources.length > 0) {
      const list = h('ul', {});
      for (const source of sources) list.append(h('li', { title: source.snippet }, source.name));
      bubble.append(h('div', { class: 'sources' }, 'Sources', list));
    }
    const up = h('button', { type: 'button', class: 'ghost', 'aria-pressed': 'false' }, 'Helpful');
    const down = h('button', { type: 'button', class: 'ghost', 'aria-pressed': 'false' }, 'Not helpful');
    const rate = (rating: 'positive' | 'negative') => {
      up.setAttribute('aria-pressed', String(rating === 'positive'));
      down.setAttribute('aria-pressed', String(rating === 'negative'));
      this.client()
        .POST('/api/v1/feedback', { body: { messageId, rating, visitorId: this.visitorId } })
        .catch((err: unknown) => this.fail(...this.describe(err)));
    };
    up.addEventListener('click', () => rate('positive'));
    down.addEventListener('click', () => rate('negative'));
    bubble.append(h('div', { class: 'rate', role: 'group', 'aria-label': 'Rate this answer' }, up, down));
  }

  // ---- errors and events --------------------------------------------------------------------------------------

  /** A stable code and a neutral visitor message for anything that went wrong. */
  private describe(err: unknown, voice = false): [string, string] {
    if (!(err instanceof ParleyError)) return ['NETWORK', errorMessages.network];
    const code = err.code || 'ERROR';
    if (err.status === 0) return ['NETWORK', errorMessages.network];
    if (code === 'WIDGET_ORIGIN_NOT_ALLOWED') return [code, errorMessages.originNotAllowed];
    if (code.startsWith('WIDGET_SIGNATURE')) return [code, errorMessages.signature];
    if (voice && (err.reason === 'voice_unavailable' || err.reason === 'voice_concurrency_limit' || err.status >= 500 || err.status === 403)) {
      return ['VOICE_UNAVAILABLE', errorMessages.voiceUnavailable];
    }
    if (err.status === 429) return [code, errorMessages.busy];
    if (err.status === 404) return [code, errorMessages.unavailable];
    return [code, err.status >= 500 ? errorMessages.unavailable : errorMessages.generic];
  }

  private fail(code: string, message: string): void {
    this.addMessage('notice', message, true);
    this.emit('parley:error', { code, message });
  }

  private failVoice(code: string, message: string): void {
    this.fail(code, message);
    this.setVoiceState('error');
  }

  private emit(type: string, detail: unknown): void {
    this.dispatchEvent(new CustomEvent(type, { detail, bubbles: true, composed: true }));
  }
}
