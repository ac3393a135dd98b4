// The inspector's only way to the data: the public REST API under /v1, with the same
// API key an agent would use. The scope (user, agent) is added to every call; with a key
// the user comes from the key, so it is left out.

const KEY_STORE = "ucma.inspector.key";
const SCOPE_STORE = "ucma.inspector.scope";

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export const session = {
  key: sessionStorage.getItem(KEY_STORE) || "",
  auth: "local", // "local" or "api_keys", from /v1/health
  user: "",
  agent: "",
  setKey(key) {
    this.key = key;
    if (key) sessionStorage.setItem(KEY_STORE, key);
    else sessionStorage.removeItem(KEY_STORE);
  },
  setScope(user, agent) {
    this.user = user || "";
    this.agent = agent || "";
    localStorage.setItem(SCOPE_STORE, JSON.stringify({ user: this.user, agent: this.agent }));
  },
  loadScope() {
    try {
      const saved = JSON.parse(localStorage.getItem(SCOPE_STORE) || "{}");
      this.user = saved.user || "";
      this.agent = saved.agent || "";
    } catch {
      this.user = "";
      this.agent = "";
    }
  },
  /** The scope fields of a request: user only without a key, agent when chosen. */
  scope() {
    const scope = {};
    if (!this.key && this.user) scope.user_id = this.user;
    if (this.agent) scope.agent_id = this.agent;
    return scope;
  },
  ready() {
    return Boolean(this.key || this.user);
  },
};

export const traffic = { requests: 0, bytes: 0 };

/** Call the API: `params` go to the query string (the scope too for GET and DELETE),
 * `body` is sent as JSON (with the scope). `scoped: false` sends no scope. */
export async function api(method, path, { params = {}, body, scoped = true } = {}) {
  const url = new URL(path, location.origin);
  const query = { ...params };
  let payload = body;
  if (scoped) {
    if (method === "GET" || method === "DELETE" || body === undefined) {
      Object.assign(query, session.scope());
    }
    if (body !== undefined) payload = { ...session.scope(), ...body };
  }
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === "") continue;
    for (const item of Array.isArray(value) ? value : [value]) url.searchParams.append(name, item);
  }
  const headers = { accept: "application/json" };
  if (session.key) headers.authorization = `Bearer ${session.key}`;
  if (payload !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(url, {
    method,
    headers,
    body: payload === undefined ? undefined : JSON.stringify(payload),
  });
  const text = await response.text();
  traffic.requests += 1;
  traffic.bytes += text.length;
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (!response.ok) {
    const error = (data && data.error) || {};
    throw new ApiError(response.status, error.code || "http_error", error.message || response.statusText);
  }
  return data;
}

export const get = (path, params) => api("GET", path, { params });
export const post = (path, body = {}) => api("POST", path, { body });
