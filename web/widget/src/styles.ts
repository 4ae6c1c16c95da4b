/**
 * The widget's styles, adopted by its shadow root as a constructable stylesheet (no <style> element and no style
 * attributes, so a page's `style-src` needs nothing for it). Theme with CSS custom properties on the element:
 *   parley-assistant { --parley-accent: #0b57d0; --parley-bg: #fff; --parley-fg: #1f1f1f; --parley-muted: #5f6368;
 *     --parley-radius: 14px; --parley-font: system-ui, sans-serif; --parley-width: 360px; --parley-z: 2147483000; }
 * `position="inline"` on the element renders the panel in the page flow instead of a floating launcher.
 */
export const css = `
:host{--a:var(--parley-accent,#0b57d0);--bg:var(--parley-bg,#fff);--fg:var(--parley-fg,#1f1f1f);--mu:var(--parley-muted,#5f6368);
--r:var(--parley-radius,14px);font:14px/1.45 var(--parley-font,system-ui,-apple-system,"Segoe UI",Roboto,sans-serif);color:var(--fg);
position:fixed;right:20px;bottom:20px;z-index:var(--parley-z,2147483000);display:block}
:host([position=inline]){position:static}
*{box-sizing:border-box}
[hidden]{display:none!important}
button{font:inherit;cursor:pointer;border-radius:999px;border:1px solid transparent;padding:8px 14px;background:var(--a);color:#fff}
button.ghost{background:transparent;color:var(--fg);border-color:color-mix(in srgb,var(--fg) 25%,transparent)}
button:focus-visible,input:focus-visible{outline:3px solid color-mix(in srgb,var(--a) 55%,transparent);outline-offset:2px}
button:disabled{opacity:.55;cursor:default}
.launcher{width:56px;height:56px;padding:0;display:grid;place-items:center;box-shadow:0 4px 16px rgba(0,0,0,.25);margin-left:auto}
:host([position=inline]) .launcher{display:none}
svg{width:24px;height:24px;fill:currentColor}
.panel{width:var(--parley-width,360px);max-width:calc(100vw - 40px);height:min(560px,calc(100vh - 110px));margin-bottom:12px;background:var(--bg);
border-radius:var(--r);box-shadow:0 8px 32px rgba(0,0,0,.22);display:flex;flex-direction:column;overflow:hidden;transition:opacity .15s,transform .15s}
:host([position=inline]) .panel{max-width:100%;margin:0;box-shadow:0 0 0 1px rgba(0,0,0,.12)}
header{display:flex;align-items:center;gap:8px;padding:12px 14px;background:var(--a);color:#fff}
header h2{font-size:15px;margin:0;flex:1;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
header button{background:transparent;padding:4px 8px;color:#fff}
.log{flex:1;overflow-y:auto;padding:12px 14px;display:flex;flex-direction:column;gap:8px}
.msg{max-width:85%;padding:8px 12px;border-radius:var(--r);white-space:pre-wrap;word-wrap:break-word}
.user{align-self:flex-end;background:var(--a);color:#fff}
.assistant{align-self:flex-start;background:color-mix(in srgb,var(--fg) 7%,var(--bg))}
.notice{align-self:center;color:var(--mu);font-size:13px;text-align:center}
.error{color:#b3261e}
.sources{margin-top:6px;font-size:12px;color:var(--mu)}
.sources ul{margin:4px 0 0;padding-left:18px}
.rate{display:flex;gap:6px;margin-top:6px}
.rate button{padding:2px 10px;font-size:12px}
.rate button[aria-pressed=true]{background:var(--a);color:#fff}
.voice{border-top:1px solid color-mix(in srgb,var(--fg) 12%,transparent);padding:10px 14px;display:flex;flex-direction:column;gap:8px}
.row{display:flex;gap:8px;align-items:center;flex-wrap:wrap}
.status{flex:1;min-width:0;color:var(--mu);min-height:1.4em}
.captions{font-style:italic;max-height:4.5em;overflow-y:auto}
.captions:empty{display:none}
.consent{background:color-mix(in srgb,var(--a) 8%,var(--bg));border-radius:10px;padding:10px}
.consent p{margin:0 0 8px}
.dot{width:10px;height:10px;border-radius:50%;background:var(--mu);flex:none}
.row:has(.status:empty) .dot,.row:has(.status:empty) .level{display:none}
.level{width:56px;height:8px;flex:none}
.row button{white-space:nowrap}
.log{min-height:min(180px,40vh)}
.dot.on{background:#1e8e3e;animation:pulse 1.2s ease-in-out infinite}
@keyframes pulse{50%{opacity:.35}}
form{display:flex;gap:8px;padding:10px 14px;border-top:1px solid color-mix(in srgb,var(--fg) 12%,transparent)}
input{flex:1;font:inherit;padding:8px 12px;border-radius:999px;border:1px solid color-mix(in srgb,var(--fg) 25%,transparent);background:var(--bg);color:var(--fg)}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
@media (prefers-reduced-motion:reduce){*{animation:none!important;transition:none!important}}
`;
