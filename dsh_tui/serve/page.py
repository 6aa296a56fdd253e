"""The page `dsh-tui serve` hands a browser: textual-serve's own, plus what a terminal gives.

textual-serve's page never focuses its terminal, so keys typed after the page opens are
lost until the person clicks into it; xterm.js sends enter for shift+enter; the web-font
link leaks to a third party that the page was opened. So the page is textual-serve's
template with scripts added and the font link left out (what each does is on
`page_template`), and every address is the one the browser used (see `Page`), so it works
through any address of the machine or a reverse proxy.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

TEMPLATE_NAME = "app_index.html"

SOCKET_SCRIPT = """<script>
/* dsh-tui: the websocket is where this page came from (textual.js reads it on load), and
   names this page load's tab id and the one it replaced in this browser tab (a reload),
   so the app can offer the workspace the last one had. The app's state (whether leaving
   would end work) comes back on tab/ID/state; while it says so, leaving asks first. */
(function () {
  var key = "dsh-tui-tab";
  function fresh() {
    var bytes = new Uint8Array(16);
    window.crypto.getRandomValues(bytes);
    return Array.prototype.map.call(bytes, function (b) {
      return ("0" + b.toString(16)).slice(-2); }).join("");
  }
  var left = null;
  try { left = window.sessionStorage.getItem(key); } catch (e) { left = null; }
  var tab = fresh();
  try { window.sessionStorage.setItem(key, tab); } catch (e) { /* no storage: no offer */ }
  var path = "ws/" + tab + (/^[0-9a-f]{32}$/.test(left || "") ? "/" + left : "");
  var url = new URL(path, window.location.href);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  url.search = "";
  url.hash = "";
  document.getElementById("terminal").dataset.sessionWebsocketUrl = url.href;
  var leave = false;
  function show() { document.body.dataset.dshTuiLeave = leave ? "1" : "0"; }
  var events = new EventSource("tab/" + tab + "/state");
  events.onmessage = function (event) {
    try { leave = JSON.parse(event.data).leave === true; } catch (e) { leave = false; }
    show();
  };
  window.addEventListener("beforeunload", function (event) {
    if (!leave || document.body.classList.contains("-closed")) { return; }
    event.preventDefault();
    event.returnValue = "";
  });
  show();
})();
</script>
"""

FOCUS_SCRIPT = """<script>
/* dsh-tui: the terminal takes the keyboard as soon as the app is on screen, and what was
   typed before that is not lost: it is held here and given to the terminal then. */
(function () {
  var early = "";
  function terminalInput() { return document.querySelector(".xterm-helper-textarea"); }
  function holdEarlyKeys(event) {
    var input = terminalInput();
    if (input && document.activeElement === input) { return; }
    if (event.key && event.key.length === 1 && !event.ctrlKey && !event.metaKey &&
        !event.altKey) {
      early += event.key;
      event.preventDefault();
    }
  }
  function focusTerminal() {
    var input = terminalInput();
    if (input && document.activeElement !== input) { input.focus(); }
    if (input && early) {
      var text = early;
      early = "";
      input.dispatchEvent(new InputEvent("input", {data: text, inputType: "insertText"}));
    }
    return input !== null;
  }
  function whenReady() {
    if (document.body.classList.contains("-first-byte") && focusTerminal()) { return; }
    setTimeout(whenReady, 25);
  }
  document.addEventListener("keydown", holdEarlyKeys, true);
  window.addEventListener("load", whenReady);
  window.addEventListener("focus", focusTerminal);
})();
</script>
"""

SHIFT_ENTER = "\x1b[13;2u"
"""shift+enter as the kitty keyboard protocol spells it, which Textual reads as shift+enter."""

KEYS_SCRIPT = """<script>
/* dsh-tui: shift+enter reaches the app as shift+enter. xterm.js sends a bare CR for enter
   whatever the modifiers; the keydown still says shift, so the page sends the kitty
   protocol's CSI 13;2 u itself, through the terminal's own input path. */
(function () {
  window.addEventListener("keydown", function (event) {
    var input = event.target;
    if (event.key !== "Enter" || !event.shiftKey || event.ctrlKey || event.altKey ||
        event.metaKey || event.isComposing || !input.classList ||
        !input.classList.contains("xterm-helper-textarea")) { return; }
    event.preventDefault();
    event.stopImmediatePropagation();
    input.dispatchEvent(new InputEvent("input", {data: SHIFT_ENTER, inputType: "insertText"}));
  }, true);
})();
</script>
""".replace("data: SHIFT_ENTER", "data: " + json.dumps(SHIFT_ENTER))

_FONT_LINK = re.compile(r'<link[^>]*fonts\.googleapis\.com[^>]*>\s*', re.IGNORECASE | re.DOTALL)


def page_template(original: str) -> str:
    """textual-serve's page template with the socket, focus and key scripts, without the web
    font (the scripts go last in the body: after the terminal's element, before `onload`).

    The focus script focuses the terminal as soon as the app's first screen arrives (and
    again when the window comes back), so the app's own focus (the composer) receives the
    keys; characters typed before that (the page is up, the app not yet) are held and
    handed to the terminal when it gets the focus, in order, ahead of what follows. The
    keys script sends shift+enter as the kitty keyboard protocol spells it (xterm.js sends
    enter for it), so shift+enter makes a new line in the composer as in a terminal that
    reports it. The web-font link goes: a font fetched from a third party leaks that the
    page was opened, and offline it only delays the first paint."""
    page = _FONT_LINK.sub("", original)
    scripts = SOCKET_SCRIPT + FOCUS_SCRIPT + KEYS_SCRIPT
    marker = page.lower().rfind("</body>")
    if marker < 0:
        return page + scripts
    return page[:marker] + scripts + page[marker:]


class Page:
    """The page, rendered per request from textual-serve's template: relative asset URLs,
    the websocket set by the page's script, the font size the URL asks for.

    Its addresses are the ones the browser used: assets relative to the page, the
    websocket derived from the page's own location (ws or wss), never pointing at a bind
    address such as 0.0.0.0. The socket's path names the page load's tab (see `tab`):
    while its app says leaving would end work (a turn runs, an agent has unsent text), a
    reload or a closed tab asks first."""

    def __init__(self, title: str) -> None:
        import jinja2
        import textual_serve

        original = (Path(textual_serve.__file__).parent / "templates" / TEMPLATE_NAME
                    ).read_text(encoding="utf-8")
        self._template = jinja2.Environment(autoescape=True).from_string(
            page_template(original))
        self.title = title

    def render(self, font_size: int = 16) -> str:
        return self._template.render(
            font_size=font_size, app_websocket_url="", ping_url="",
            config={"static": {"url": "static/"}}, application={"name": self.title})
