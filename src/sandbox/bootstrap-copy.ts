/** Deepest nesting of a value that may leave the isolate. */
export const MAX_DEPTH = 40;

/**
 * Part of the bootstrap (spliced into its closure, so it uses the built-ins captured there): how a value leaves the
 * isolate. `copyOut` writes JSON text itself from own data properties only: no getter, toJSON or iterator of the
 * module's runs (an accessor is refused), depth and length are capped as it goes, cycles and anything that is not
 * plain data are refused with the path. `describe` turns anything thrown into a short string from the own data
 * properties `name` and `message` of the value or its prototypes, never calling a getter or toString, so even an
 * Error whose `message` getter loops cannot stall the host: whatever runs here runs under the call's limits.
 */
export const COPY_CODE = `
  const MAX_DEPTH = ${MAX_DEPTH};

  function copyOut(value, what, max) {
    const st = { out: "", max, fail: undefined, stack: { __proto__: null } };
    copyValue(value, what, 0, st);
    if (st.fail !== undefined) return st.fail;
    return "v" + st.out;
  }

  function put(st, text) {
    st.out += text;
    if (st.out.length > st.max) st.fail = "oreturned more output than the limit of " + st.max + " characters";
    return st.fail === undefined;
  }
  function refuse(st, message) {
    st.fail = "e" + message;
    return false;
  }

  const MISSING = freeze({});
  const FAILED = freeze({});
  function dataOf(st, obj, key, path) {
    const d = getOwnDesc(obj, key);
    if (d === undefined) return MISSING;
    if (hasOwn(d, "get") || hasOwn(d, "set")) {
      refuse(st, "returned an accessor (getter or setter) at " + path + "; return plain data (JSON)");
      return FAILED;
    }
    return d.value;
  }

  function copyValue(v, path, depth, st) {
    const t = typeof v;
    if (v === null || t === "undefined") return put(st, "null");
    if (t === "string") return put(st, stringify(v));
    if (t === "boolean") return put(st, v ? "true" : "false");
    if (t === "number") return isFiniteNumber(v) ? put(st, stringify(v)) : refuse(st, "returned a non-finite number at " + path);
    if (t === "function") return refuse(st, "returned a function at " + path + "; return plain data (JSON)");
    if (t !== "object") return refuse(st, "returned a " + t + " at " + path + "; return plain data (JSON)");
    if (depth >= MAX_DEPTH) return refuse(st, "returned a value nested deeper than " + MAX_DEPTH + " levels");
    for (let i = 0; i < depth; i++) if (st.stack[i] === v) return refuse(st, "returned a cyclic value at " + path);
    st.stack[depth] = v;
    if (isArray(v)) return copyArray(v, path, depth, st);
    const proto = getProto(v);
    if (proto !== ObjectProto && proto !== null) return refuse(st, "returned an object that is not plain data at " + path);
    const keys = keysOf(v);
    if (!put(st, "{")) return false;
    let first = true;
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i];
      const d = dataOf(st, v, k, path + "." + k);
      if (d === FAILED) return false;
      if (d === MISSING || d === undefined) continue;
      if (!put(st, (first ? "" : ",") + stringify(k) + ":")) return false;
      first = false;
      if (!copyValue(d, path + "." + k, depth + 1, st)) return false;
    }
    return put(st, "}");
  }

  function copyArray(v, path, depth, st) {
    const len = dataOf(st, v, "length", path + ".length");
    if (len === FAILED) return false;
    if (!put(st, "[")) return false;
    for (let i = 0; i < len; i++) {
      const d = dataOf(st, v, i, path + "[" + i + "]");
      if (d === FAILED) return false;
      if (!put(st, i === 0 ? "" : ",")) return false;
      if (!copyValue(d === MISSING ? undefined : d, path + "[" + i + "]", depth + 1, st)) return false;
    }
    return put(st, "]");
  }

  const ACCESSOR = freeze({});
  function ownString(obj, key) {
    for (let o = obj, hops = 0; o !== null && hops < 16; o = getProto(o), hops++) {
      const d = getOwnDesc(o, key);
      if (d === undefined) continue;
      if (!hasOwn(d, "value")) return ACCESSOR;
      return typeof d.value === "string" ? d.value : undefined;
    }
    return undefined;
  }

  function firstLine(text) {
    const nl = rApply(indexOfStr, text, ["\\n"]);
    return rApply(sliceStr, text, [0, nl < 0 ? 500 : nl < 500 ? nl : 500]);
  }

  function describe(err) {
    try {
      const t = typeof err;
      if (t === "string") return firstLine(err);
      if (err === null || (t !== "object" && t !== "function")) return firstLine(toStr(err));
      const message = ownString(err, "message");
      const name = ownString(err, "name");
      const label = typeof name === "string" ? name : "an object";
      if (message === ACCESSOR) return "threw " + firstLine(label) + " whose message is a getter, which hone does not run";
      if (typeof message === "string" && message !== "") return firstLine(message);
      return typeof name === "string" ? firstLine(name) : "threw an object that is not an Error";
    } catch (inner) {
      return "threw a value that could not be described";
    }
  }
`;
