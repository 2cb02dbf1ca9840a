/**
 * The part of pylatexenc's `LatexNodes2Text().latex_to_text` (default settings, text mode) that PRM800K's grader
 * meets in math answers, written from its observed behaviour: characters pass through, braces group, a letter
 * macro swallows the spaces after its name, arguments are a group, a macro or one character after optional
 * spaces, `\frac` gives "a/b", `\sqrt[n]{x}` gives "√(x)", text macros give their content, symbols their Unicode
 * character, spacing macros spaces, "~" a no-break space; unclosed groups close at the end and stray "}" vanish.
 * Anything outside this vocabulary (other macros, \( \[ math, accents, styled alphabets, the specials & -- ``
 * '', a newline) returns `undefined`: the caller treats it as the grader treats a conversion that raises (the
 * expression is kept as it is). pylatexenc renders a macro it does not know as nothing; this port cannot tell an
 * unknown macro from one it knows and this file does not, so both count as outside the vocabulary.
 */

type Node =
  | { kind: "chars"; text: string }
  | { kind: "group"; nodes: Node[] }
  | { kind: "macro"; name: string; args?: (Node | null)[] };

// biome-ignore format: a table reads better packed
const SYMBOLS: Record<string, string> = {
  pi: "π", infty: "∞", cup: "∪", cap: "∩", cdot: "·", times: "×", pm: "±", mp: "∓", le: "≤", leq: "≤", ge: "≥",
  geq: "≥", neq: "≠", circ: "∘", div: "÷", approx: "≈", in: "∈", notin: "∉", emptyset: "∅", varnothing: "∅",
  angle: "∠", ldots: "…", dots: "…", cdots: "⋯", alpha: "α", beta: "β", gamma: "γ", delta: "δ", epsilon: "ϵ",
  varepsilon: "ε", zeta: "ζ", eta: "η", theta: "θ", lambda: "λ", mu: "μ", rho: "ρ", sigma: "σ", tau: "τ",
  phi: "ϕ", varphi: "φ", omega: "ω", Delta: "Δ", Omega: "Ω", Pi: "Π", Sigma: "Σ", sin: "sin", cos: "cos",
  tan: "tan", arcsin: "arcsin", arccos: "arccos", arctan: "arctan", log: "log", ln: "ln", exp: "exp",
  subset: "⊂", subseteq: "⊆", prime: "'", to: "→", rightarrow: "→", sim: "∼", equiv: "≡", cong: "≅", perp: "⊥",
  parallel: "∥", mid: "|", vert: "|", lvert: "|", rvert: "|", langle: "⟨", rangle: "⟩", lfloor: "⌊", rfloor: "⌋",
  lceil: "⌈", rceil: "⌉", setminus: "∖", backslash: "\\", textdegree: "°", quad: "  ", qquad: "    ",
  // Macros rendered as nothing; where one takes an argument its content follows as text, which renders the same.
  left: "", right: "", displaystyle: "", ne: "", degree: "", deg: "", triangle: "", sec: "", csc: "", cot: "",
  gcd: "", lcm: "", det: "", mod: "", bmod: "", pmod: "", implies: "", iff: "", binom: "", dbinom: "", tbinom: "",
  text: "", textrm: "", textit: "", textbf: "", textnormal: "", emph: "", mathrm: "", operatorname: "", boxed: "",
  fbox: "", phantom: "", big: "", Big: "", bigg: "", middle: "", boldsymbol: "", cfrac: "",
};
/** Macros whose one argument is dropped. */
const DROP_ARGUMENT = new Set(["mbox", "textsf", "texttt", "textup", "hspace"]);
/** Macros that render their one argument's content ("%s"), where a missing argument is a configuration error. */
const CONTENT = new Set(["overline", "underline", "widehat", "widetilde", "overrightarrow", "overleftarrow"]);
/** Styled alphabets (\mathbf{x} → 𝐱): not reproduced, except that without a letter to style they give nothing. */
const STYLED = new Set(["mathbf", "mathit", "mathcal", "mathbb", "mathfrak", "mathsf", "mathtt"]);
// biome-ignore format: a table reads better packed
const ONE_CHAR: Record<string, string> = {
  ",": " ", ";": " ", ":": " ", " ": " ", "!": "", "{": "{", "}": "}", "%": "%", $: "$", "#": "#", "&": "&",
  _: "_", "\\": "\n", "/": "", "@": "", ">": "", "<": "", "|": "",
};

class Unsupported extends Error {}

/** What a macro takes: mandatory arguments, and whether `\sqrt`'s optional `[n]` comes first. */
function arity(name: string): { mandatory: number; optional: boolean } {
  if (name === "frac" || name === "nicefrac") return { mandatory: 2, optional: false };
  if (name === "sqrt") return { mandatory: 1, optional: true };
  if (DROP_ARGUMENT.has(name) || CONTENT.has(name) || STYLED.has(name)) return { mandatory: 1, optional: false };
  // \( \) \[ \] delimit math in pylatexenc, which changes the tree: not reproduced.
  if (/^[()[\]]$/.test(name)) throw new Unsupported();
  // Any other macro takes no argument; one outside the vocabulary fails only where it is rendered.
  return { mandatory: 0, optional: false };
}

/**
 * The parser, tolerant as pylatexenc's default: an unclosed "{" closes at the end, a stray "}" is dropped. A
 * macro's arguments are read after optional spaces: a group, a bare macro or one character; a closing brace
 * leaves the remaining arguments empty; the end of the input drops them all and reads on after the macro name.
 */
class Parser {
  i = 0;
  constructor(private readonly s: string) {}

  nodes(inGroup: boolean): Node[] {
    const out: Node[] = [];
    let text = "";
    const flush = () => {
      if (text) out.push({ kind: "chars", text });
      text = "";
    };
    while (this.i < this.s.length) {
      const c = this.s[this.i] as string;
      if (c === "}") {
        this.i++;
        if (inGroup) break;
      } else if (c === "{") {
        flush();
        this.i++;
        out.push({ kind: "group", nodes: this.nodes(true) });
      } else if (c === "\\") {
        flush();
        out.push(this.macro());
      } else {
        text += c;
        this.i++;
      }
    }
    flush();
    return out;
  }

  private macroName(): string {
    const m = /^\\([a-zA-Z]+)[ \t]*(?:\n[ \t]*)?|^\\([^a-zA-Z])/.exec(this.s.slice(this.i, this.i + 66));
    const all = m?.[0] ?? "\\";
    if (all.length >= 64) throw new Unsupported();
    this.i += all.length;
    return m?.[2] ?? m?.[1] ?? "";
  }

  private macro(): Node {
    const name = this.macroName();
    const { mandatory, optional } = arity(name);
    if (mandatory === 0) return { kind: "macro", name };
    const after = this.i;
    const args: (Node | null)[] = [];
    if (optional) {
      this.skipSpaces();
      if (this.s[this.i] === "[") {
        const close = this.s.indexOf("]", this.i);
        if (close < 0) {
          this.i = after;
          return { kind: "macro", name };
        }
        if (/[{}]/.test(this.s.slice(this.i, close)) && !/^\[\{[^{}]*\}\]$/.test(this.s.slice(this.i, close + 1)))
          throw new Unsupported();
        this.i = close + 1;
      }
    }
    for (let k = 0; k < mandatory; k++) {
      const a = this.argument();
      if (a === undefined) {
        this.i = after;
        return { kind: "macro", name };
      }
      args.push(a);
    }
    return { kind: "macro", name, args };
  }

  /** Spaces and tabs with at most one newline (a blank line is a paragraph break, refused up front). */
  private skipSpaces(): void {
    this.i += (/^[ \t]*(?:\n[ \t]*)?/.exec(this.s.slice(this.i)) as RegExpExecArray)[0].length;
  }

  /** One argument: a node, null at a closing brace, undefined at the end of the input. */
  private argument(): Node | null | undefined {
    this.skipSpaces();
    if (this.i >= this.s.length) return undefined;
    const c = this.s[this.i] as string;
    if (c === "}") return null;
    if (c === "{") {
      this.i++;
      return { kind: "group", nodes: this.nodes(true) };
    }
    if (c === "\\") {
      // A lone backslash at the very end is no argument: pylatexenc reaches the end of the input.
      if (this.i === this.s.length - 1) return undefined;
      const name = this.macroName();
      arity(name);
      return { kind: "macro", name };
    }
    const ch = String.fromCodePoint(this.s.codePointAt(this.i) as number);
    this.i += ch.length;
    return { kind: "chars", text: ch };
  }
}

/** pylatexenc's text-mode specials other than "~" (a no-break space): & `` '' -- !` ?`, and whitespace other than
 * spaces, tabs and single newlines: not reproduced. */
const SPECIALS = /[&`]|''|--|!`|\?`|(?![ \t\n])\p{White_Space}/u;

function render(list: Node[]): string {
  return list.map(renderNode).join("");
}

const argText = (n: Node | null | undefined): string => (!n ? "" : n.kind === "group" ? render(n.nodes) : renderNode(n));

function renderNode(n: Node): string {
  if (n.kind === "chars") {
    if (SPECIALS.test(n.text)) throw new Unsupported();
    return n.text.replace(/~/g, "\u00a0");
  }
  if (n.kind === "group") return render(n.nodes);
  const { name, args } = n;
  if (name === "frac" || name === "nicefrac") return args ? `${argText(args[0])}/${argText(args[1])}` : "%s/%s";
  if (name === "sqrt") {
    // '√(%(2)s)' without arguments raises KeyError in pylatexenc, which the grader catches.
    if (!args) throw new Unsupported();
    return `√(${argText(args[0])})`;
  }
  if (DROP_ARGUMENT.has(name)) return "";
  if (STYLED.has(name)) {
    if (args && argText(args[0]) !== "") throw new Unsupported();
    return "";
  }
  if (CONTENT.has(name)) return args ? argText(args[0]) : "%s";
  const text = SYMBOLS[name] ?? ONE_CHAR[name] ?? (name === "" ? "" : undefined);
  if (text === undefined) throw new Unsupported();
  return text;
}

/** latex_to_text for the supported vocabulary, or undefined. */
export function latexToText(s: string): string | undefined {
  if (/\n[ \t]*\n/.test(s)) return undefined;
  try {
    return render(new Parser(s).nodes(false));
  } catch (err) {
    if (err instanceof Unsupported) return undefined;
    throw err;
  }
}
