/**
 * A strict reader of the XML subset JUnit reports use (declaration, elements, attributes, text, the five entities and
 * numeric references): it throws on anything not well-formed, so a test can say "valid XML" without a dependency.
 */
export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  text: string;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decode(raw: string, where: number): string {
  if (/[<]/.test(raw)) throw new Error(`unescaped < at ${where}`);
  return raw.replace(/&([^;]*);|&/g, (all, name: string | undefined) => {
    if (name === undefined) throw new Error(`bare & at ${where}`);
    if (name in ENTITIES) return ENTITIES[name]!;
    const m = /^#(x[0-9a-fA-F]+|[0-9]+)$/.exec(name);
    if (!m) throw new Error(`unknown entity &${name}; at ${where}`);
    return String.fromCodePoint(m[1]!.startsWith('x') ? parseInt(m[1]!.slice(1), 16) : Number(m[1]));
  });
}

export function parseXml(xml: string): XmlElement {
  let at = 0;
  const decl = /^<\?xml[^?]*\?>\s*/.exec(xml);
  if (decl) at = decl[0].length;
  const root: XmlElement = { name: '#document', attrs: {}, children: [], text: '' };
  const stack: XmlElement[] = [root];
  const NAME = /[A-Za-z_][\w.-]*/y;
  while (at < xml.length) {
    const lt = xml.indexOf('<', at);
    const text = xml.slice(at, lt === -1 ? xml.length : lt);
    if (text.trim() !== '') {
      if (stack.length === 1) throw new Error(`text outside the root at ${at}`);
      stack.at(-1)!.text += decode(text, at);
    }
    if (lt === -1) break;
    at = lt + 1;
    const closing = xml[at] === '/';
    if (closing) at++;
    NAME.lastIndex = at;
    const name = NAME.exec(xml)?.[0];
    if (!name) throw new Error(`bad tag name at ${at}`);
    at += name.length;
    if (closing) {
      const open = stack.pop();
      if (open?.name !== name) throw new Error(`</${name}> closes <${open?.name}> at ${at}`);
      const end = /\s*>/y;
      end.lastIndex = at;
      if (!end.exec(xml)) throw new Error(`bad closing tag at ${at}`);
      at = end.lastIndex;
      continue;
    }
    const element: XmlElement = { name, attrs: {}, children: [], text: '' };
    const attr = /\s+([A-Za-z_][\w.:-]*)="([^"]*)"/y;
    for (;;) {
      attr.lastIndex = at;
      const m = attr.exec(xml);
      if (!m) break;
      if (m[1]! in element.attrs) throw new Error(`repeated attribute ${m[1]} at ${at}`);
      element.attrs[m[1]!] = decode(m[2]!, at);
      at = attr.lastIndex;
    }
    const end = /\s*(\/?)>/y;
    end.lastIndex = at;
    const closed = end.exec(xml);
    if (!closed) throw new Error(`bad tag <${name} at ${at}`);
    at = end.lastIndex;
    if (stack.length === 1 && root.children.length > 0) throw new Error('a second root element');
    stack.at(-1)!.children.push(element);
    if (closed[1] !== '/') stack.push(element);
  }
  if (stack.length !== 1) throw new Error(`<${stack.at(-1)!.name}> is never closed`);
  if (root.children.length !== 1) throw new Error('no root element');
  return root.children[0]!;
}
