/**
 * <parley-assistant>: chat and realtime voice with one Parley assistant, from any page.
 *
 *   <script src="https://parley.example.com/widget/v1/parley.js" async></script>
 *   <parley-assistant assistant-id="asst_..."></parley-assistant>
 *
 * Attributes: assistant-id (required), server (default: the script's origin), mode (chat | voice | both; default
 * from the widget config), visitor-id (default: a random id kept in localStorage), signature (from
 * POST /api/v1/widget/sign, sent as X-Parley-Signature), open (start expanded), position="inline" (no launcher),
 * transport (auto | webrtc | websocket; default auto: WebRTC to the provider when its config lists it, else the relay).
 * Parley's own dashboard only: source="playground" calls the API as the signed-in owner (session cookie, same origin):
 * the assistant is read from the owner routes and calls are metered as playground; elsewhere it grants nothing.
 * API: startVoice(), endVoice(), sendMessage(text), open(), close().
 * Events (bubbling, composed): parley:state {voice, transport}, parley:message {role, text, final},
 * parley:ended {endReason}, parley:error {code, message}.
 */
import { createParleyClient, type ParleyClient } from '@parley/sdk';
import { createAudioContext } from './audio/session.js';
import { streamAnswer, type ChatHost } from './chat.js';
import { fetchWidgetConfig, type Mode, type Source, type WidgetConfig } from './config.js';
import { h } from './dom.js';
import { describeError, disableControls } from './errors.js';
import { errorMessages, stateLabels } from './messages.js';
import { TestHook } from './test-hook.js';
import { createView, mountView } from './view.js';
import { storedVisitorId } from './visitor.js';
import { VoiceController, type VoiceState } from './voice.js';

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
  private refused = false; // the server refused this page's origin: the controls stay off
  private voiceState: VoiceState = 'idle';
  private consentAnswer: ((yes: boolean) => void) | undefined;
  private visitorCache: string | undefined;
  private chatBusy = false;
  private readonly voice = new VoiceController({
    state: (state) => this.setVoiceState(state),
    caption: (role, text, final) => this.showCaption(role, text, final),
    ended: (endReason, message) => {
      if (endReason === 'voice_unavailable') this.voiceUnavailable = true;
      this.addMessage('notice', message);
      this.setVoiceState('ended');
      this.emit('parley:ended', { endReason });
    },
    failed: (code, message) => {
      if (code === 'VOICE_UNAVAILABLE') this.voiceUnavailable = true;
      this.failVoice(code, message);
    },
    test: () => this.parleyTest,
    level: (value) => (this.ui.level.value = value),
    transport: (transport, fallback) => {
      this.voiceTransport = transport;
      this.emit('parley:state', { voice: this.voiceState, transport, ...(fallback ? { fallback } : {}) });
    },
  });
  /** The current call's transport (parley:state detail `transport`). */
  private voiceTransport: 'webrtc' | 'websocket' | undefined;
  /** Present only with a data-test attribute: what the browser tests read (see README, Testing). */
  parleyTest: TestHook | undefined;

  private readonly ui = createView();

  /** What a chat turn (chat.ts) reaches of this element. */
  private readonly chat: ChatHost = {
    client: () => this.client(),
    log: this.ui.log,
    scrollLog: () => this.scrollLog(),
    emit: (type, detail) => this.emit(type, detail),
    fail: (code, message) => this.fail(code, message),
    visitorId: () => this.visitorId,
    conversation: (conversationId) => (this.conversationId = conversationId),
  };

  constructor() {
    super();
    this.root = this.attachShadow({ mode: 'open' });
    mountView(this.root, this.ui);
    const u = this.ui;
    u.agree.addEventListener('click', () => this.answerConsent(true));
    u.decline.addEventListener('click', () => this.answerConsent(false));
    u.launcher.addEventListener('click', () => {
      if (this.isOpen) return this.close();
      this.open();
      // Keyboard users land on the first control of the panel.
      (this.mode === 'voice' ? u.start : u.input).focus();
    });
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
    if (this.voice.active) void this.endVoice();
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
    const voiceUnavailable = this.voiceUnavailable;
    this.voiceUnavailable = false;
    try {
      await streamAnswer(this.chat, {
        assistantId: this.assistantId,
        message,
        visitorId: this.visitorId,
        source: this.source,
        conversationId: this.conversationId,
        voiceUnavailable,
      });
    } finally {
      this.chatBusy = false;
      this.ui.send.disabled = this.refused;
    }
  }

  /** Starts a voice call (asks for recording consent first when the assistant records). */
  async startVoice(): Promise<void> {
    if (this.voice.active || this.voiceState === 'connecting') return;
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
    this.renderMute(false);
    const starting = this.voice.start({
      context,
      workletUrl: scriptBase.audioUrl || `${this.server}/widget/v1/parley-audio.js`,
      server: this.server,
      assistantId: this.assistantId,
      visitorId: this.visitorId,
      signature: this.signature,
      conversationId: this.conversationId,
      recordingConsent: recorded,
      source: this.source,
      transport: (['webrtc', 'websocket'] as const).find((v) => v === this.getAttribute('transport')) ?? 'auto',
      transports: config.voice.transports,
    });
    this.renderCall();
    const conversationId = await starting;
    if (conversationId !== undefined) this.conversationId = conversationId;
    this.renderCall();
  }

  /** Hangs up. Resolves once the service confirmed the end (or could not be reached). */
  async endVoice(): Promise<void> {
    if (this.consentAnswer !== undefined) this.answerConsent(false);
    await this.voice.end();
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

  /** playground: the dashboard's owner session (the server grants it only to that); otherwise a site visitor. */
  private get source(): Source {
    return this.getAttribute('source') === 'playground' ? 'playground' : 'widget';
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
    return (this.visitorCache ??= storedVisitorId());
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
    this.configLoading ??= fetchWidgetConfig(this.client(), this.source, this.assistantId).then(
      (config) => {
        this.config = config;
        this.ui.title.textContent = config.name;
        if (config.welcomeMessage && this.ui.log.childElementCount === 0)
          this.addMessage('assistant', config.welcomeMessage);
        this.renderMode();
        return config;
      },
      (err: unknown) => {
        this.configLoading = undefined; // the next action tries again
        const [code, message] = describeError(err);
        // The visitor reads a neutral line (rule 20) and finds the controls off; the console speaks to the site owner.
        if (code === 'WIDGET_ORIGIN_NOT_ALLOWED') this.refused = disableControls(this.ui, err);
        this.fail(code, message);
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
    this.ui.agree.focus();
    return new Promise((resolve) => (this.consentAnswer = resolve));
  }

  private answerConsent(yes: boolean): void {
    const answer = this.consentAnswer;
    this.consentAnswer = undefined;
    this.ui.consent.hidden = true;
    this.renderCall();
    answer?.(yes);
  }

  private toggleMute(): void {
    this.renderMute(this.voice.toggleMute());
  }

  private renderMute(muted: boolean): void {
    this.ui.mute.setAttribute('aria-pressed', String(muted));
    this.ui.mute.textContent = muted ? 'Unmute microphone' : 'Mute microphone';
  }

  // Page unload: end the call with a keepalive request that outlives the page.
  private readonly onPageHide = (): void => this.voice.endOnUnload();

  /** The caption being spoken shows in the aria-live captions line; once complete it joins the conversation log. */
  private showCaption(role: 'user' | 'assistant', text: string, final: boolean): void {
    if (final) {
      this.ui.captions.textContent = '';
      this.addMessage(role, text);
    } else {
      this.ui.captions.replaceChildren(h('div', { class: `msg ${role}` }, text));
    }
    this.emit('parley:message', { role, text, final });
  }

  // ---- rendering ----------------------------------------------------------------------------------------------

  private setVoiceState(state: VoiceState): void {
    if (state === this.voiceState) return;
    this.voiceState = state;
    this.parleyTest?.record('state', state);
    this.ui.status.textContent = stateLabels[state] ?? '';
    this.ui.dot.classList.toggle('on', state === 'listening' || state === 'speaking');
    this.renderCall();
    this.emit('parley:state', { voice: state, ...(this.voiceTransport ? { transport: this.voiceTransport } : {}) });
  }

  private renderCall(): void {
    const inCall = this.voice.active;
    const asking = this.consentAnswer !== undefined;
    this.ui.start.hidden = inCall || asking;
    this.ui.start.disabled = this.refused || this.voiceState === 'connecting';
    this.ui.mute.hidden = !inCall;
    this.ui.end.hidden = !inCall;
  }

  private renderOpen(): void {
    const open = this.isOpen || this.getAttribute('position') === 'inline';
    this.ui.panel.hidden = !open;
    this.ui.launcher.setAttribute('aria-expanded', String(open));
    this.ui.launcher.setAttribute('aria-label', open ? 'Hide assistant' : 'Open assistant');
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

  // ---- errors and events --------------------------------------------------------------------------------------

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
