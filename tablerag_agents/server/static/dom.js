// Build DOM nodes from untrusted text safely: text is only ever set as text
// (textContent / text nodes), never parsed as HTML.

const ALLOWED = /^(class|title|type|role|hidden|disabled|checked|value|for|id|data-[a-z-]+|aria-[a-z-]+)$/;

/** An element with attributes (a fixed safe set) and children (nodes or strings, as text). */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (!ALLOWED.test(name)) throw new Error(`attribute not allowed: ${name}`);
    if (name === "checked" || name === "disabled" || name === "hidden") node[name] = true;
    else if (name === "value") node.value = String(value);
    else node.setAttribute(name, String(value));
  }
  node.append(...children.filter((c) => c !== undefined && c !== null).map(asNode));
  return node;
}

function asNode(child) {
  return child instanceof Node ? child : document.createTextNode(String(child));
}

/** Replace an element's children. */
export function fill(node, ...children) {
  node.replaceChildren(...children.filter((c) => c !== undefined && c !== null).map(asNode));
}
