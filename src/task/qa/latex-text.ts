import { PY_SPACE_CLASS, pyLen, pyStrip } from "./python-text.ts";

/**
 * The part of pylatexenc's `LatexNodes2Text().latex_to_text` (default settings, text mode) that PRM800K's grader
 * meets in math answers, written from its observed behaviour: characters pass through, braces group, a letter
 * macro swallows the spaces after its name, arguments are a group, a macro or one character after optional
 * spaces, `\frac` gives "a/b", `\sqrt[n]{x}` gives "√(x)", text macros give their content, symbols their Unicode
 * character, spacing macros spaces, "~" a no-break space, pmatrix/bmatrix/smallmatrix "[ a b; c d ]"; unclosed
 * groups close at the end and stray "}" vanish. Anything outside this vocabulary (other macros and environments,
 * $ and \( \[ math, % comments, accents, styled alphabets, the specials & -- `` '', a blank line) returns
 * `undefined`: pylatexenc's text for it is unknown here, and the caller (prm800k.ts) must not take two such
 * expressions for equal unless they are the same. pylatexenc renders a macro it does not know as nothing; this
 * port cannot tell an unknown macro from one it knows and this file does not, so both count as outside the
 * vocabulary. Checked against pylatexenc 2.10 on random strings over this vocabulary and beyond it.
 */

type Node =
  | { kind: "chars"; text: string }
  | { kind: "group"; nodes: Node[] }
  | { kind: "macro"; name: string; args?: (Node | null)[] }
  /** A matrix environment's cells, row by row (pylatexenc's fmt_matrix_environment_node). */
  | { kind: "matrix"; rows: Node[][][] }
  /** "&" inside a matrix environment: the next column. */
  | { kind: "column" };

/** The matrix environments pylatexenc renders as "[ a b; c d ]" (array, which takes a column spec, is not here). */
const MATRICES = new Set(["pmatrix", "bmatrix", "smallmatrix"]);

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
  textnormal: "", operatorname: "", boxed: "",
  fbox: "", phantom: "", big: "", Big: "", bigg: "", middle: "", boldsymbol: "", cfrac: "",
};
/** Macros whose one argument is rendered as its content, and which render nothing without one. */
const TEXT_ARGUMENT = new Set(["text", "textrm", "textit", "textbf", "emph", "mathrm"]);
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
  if (DROP_ARGUMENT.has(name) || CONTENT.has(name) || STYLED.has(name) || TEXT_ARGUMENT.has(name))
    return { mandatory: 1, optional: false };
  // \( \) \[ \] delimit math in pylatexenc and \begin \end environments, which changes the tree: not reproduced.
  if (/^[()[\]]$/.test(name) || name === "begin" || name === "end") throw new Unsupported();
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

  nodes(inGroup: boolean, environment?: string): Node[] {
    const out: Node[] = [];
    let text = "";
    const flush = () => {
      if (text) out.push({ kind: "chars", text });
      text = "";
    };
    while (this.i < this.s.length) {
      const c = this.s[this.i] as string;
      if (environment !== undefined && (c === "&" || c === "\\" || c === "}")) {
        flush();
        if (c === "&") {
          out.push({ kind: "column" });
          this.i++;
          continue;
        }
        if (c === "}") throw new Unsupported();
        const end = /^\\end[ \t]*(?:\n[ \t]*)?\{([\w* ._-]+)\}/u.exec(this.s.slice(this.i, this.i + 80));
        if (end) {
          if (end[1] !== environment) throw new Unsupported();
          this.i += end[0].length;
          return out;
        }
        out.push(this.macro());
      } else if (c === "}") {
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
    // An environment left open at the end of the input: not reproduced.
    if (environment !== undefined) throw new Unsupported();
    return out;
  }

  /**
   * `\begin{name}…\end{name}` of a matrix environment: cells split at "&" and rows at "\\\\". Every cell must hold
   * more than spaces (pylatexenc's handling of empty cells and a trailing "\\\\" is not reproduced).
   */
  private environment(): Node {
    const begin = /^[ \t]*(?:\n[ \t]*)?\{([\w* ._-]+)\}/u.exec(this.s.slice(this.i, this.i + 80));
    if (!begin || !MATRICES.has(begin[1] as string)) throw new Unsupported();
    this.i += begin[0].length;
    const rows: Node[][][] = [[[]]];
    for (const n of this.nodes(false, begin[1])) {
      const row = rows[rows.length - 1] as Node[][];
      if (n.kind === "column") row.push([]);
      else if (n.kind === "macro" && n.name === "\\") rows.push([[]]);
      else (row[row.length - 1] as Node[]).push(n);
    }
    const blank = (cell: Node[]) => cell.every((n) => n.kind === "chars" && pyStrip(n.text) === "");
    if (rows.some((row) => row.some(blank))) throw new Unsupported();
    return { kind: "matrix", rows };
  }

  /** A macro's name: letters as Python's `str.isalpha` has them (any script: "\\piπ" is one unknown macro), or one
   * other character; an alphabetic name swallows the spaces after it. */
  private macroName(): string {
    const m = /^\\(\p{L}+)[ \t]*(?:\n[ \t]*)?|^\\(\P{L})/u.exec(this.s.slice(this.i, this.i + 66));
    const all = m?.[0] ?? "\\";
    if (all.length >= 64) throw new Unsupported();
    this.i += all.length;
    return m?.[2] ?? m?.[1] ?? "";
  }

  private macro(): Node {
    const name = this.macroName();
    if (name === "begin") return this.environment();
    // "\\" takes an optional "*" and "[…]" right after it in pylatexenc, "\hspace" an optional "*": not reproduced.
    if (name === "\\" && /^[*[]/.test(this.s.slice(this.i, this.i + 1))) throw new Unsupported();
    if (name === "hspace" && /^[ \t\n]*\*/.test(this.s.slice(this.i, this.i + 64))) throw new Unsupported();
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
    // A special token ('' -- `` !` ?` &), math mode or a comment as an argument: not reproduced.
    if (/^(?:''|--|[`&$%]|[!?]`)/.test(this.s.slice(this.i, this.i + 2))) throw new Unsupported();
    const ch = String.fromCodePoint(this.s.codePointAt(this.i) as number);
    this.i += ch.length;
    return { kind: "chars", text: ch };
  }
}

/** pylatexenc's text-mode specials other than "~" (a no-break space): & `` '' -- !` ?`, math mode ($), comments
 * (%), and whitespace other than spaces, tabs and single newlines: not reproduced. */
const SPECIALS = /[&`$%]|''|--|!`|\?`|(?![ \t\n])\p{White_Space}/u;

function render(list: Node[]): string {
  return list.map(renderNode).join("");
}

const argText = (n: Node | null | undefined): string => (!n ? "" : n.kind === "group" ? render(n.nodes) : renderNode(n));

/** `fmt_matrix_environment_node`: each cell stripped and right-justified to the widest (in code points). */
function renderMatrix(rows: Node[][][]): string {
  const cells = rows.map((row) => row.map((cell) => pyStrip(render(cell))));
  const width = Math.max(...cells.flat().map(pyLen));
  const pad = (x: string) => " ".repeat(width - pyLen(x)) + x;
  return `[ ${cells.map((row) => row.map(pad).join(" ")).join("; ")} ]`;
}

function renderNode(n: Node): string {
  if (n.kind === "matrix") return renderMatrix(n.rows);
  if (n.kind === "column") throw new Unsupported();
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
  if (TEXT_ARGUMENT.has(name)) return args ? argText(args[0]) : "";
  const text = SYMBOLS[name] ?? ONE_CHAR[name] ?? (name === "" ? "" : undefined);
  if (text === undefined) throw new Unsupported();
  return text;
}

/** Whitespace other than spaces, tabs and newlines, as Python's `str.isspace` has it: pylatexenc skips it after a
 * macro's name and before its arguments, this port does not. */
const OTHER_SPACE = new RegExp(`(?![ \\t\\n])[${PY_SPACE_CLASS}]`, "u");

/** latex_to_text for the supported vocabulary, or undefined. */
export function latexToText(s: string): string | undefined {
  if (/\n[ \t]*\n/.test(s) || OTHER_SPACE.test(s)) return undefined;
  try {
    return render(new Parser(s).nodes(false));
  } catch (err) {
    if (err instanceof Unsupported) return undefined;
    throw err;
  }
}
