"""The page `dsh-tui serve` hands a browser: textual-serve's own, plus what a terminal gives.

textual-serve's page never focuses its terminal, so keys typed after the page opens are
lost until the person clicks into it. The page here is textual-serve's template with one
script added: focus the terminal as soon as the app's first screen arrives (and again
when the window comes back), so the app's own focus (the composer) receives the keys;
characters typed before that (the page is up, the app not yet) are held and handed to the
terminal when it gets the focus, in order, ahead of what follows.
It also leaves out the page's web-font link: a font fetched from a third party leaks
that the page was opened, and offline it only delays the first paint.
"""

from __future__ import annotations

import re
from pathlib import Path

TEMPLATE_NAME = "app_index.html"

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

_FONT_LINK = re.compile(r'<link[^>]*fonts\.googleapis\.com[^>]*>\s*', re.IGNORECASE | re.DOTALL)


def page_template(original: str) -> str:
    """textual-serve's page template with the focus script and without the web font."""
    page = _FONT_LINK.sub("", original)
    marker = page.lower().rfind("</body>")
    if marker < 0:
        return page + FOCUS_SCRIPT
    return page[:marker] + FOCUS_SCRIPT + page[marker:]


def write_templates(directory: Path) -> Path:
    """Write the page into `directory` (a textual-serve `templates_path`) and return it."""
    import textual_serve

    original = (Path(textual_serve.__file__).parent / "templates" / TEMPLATE_NAME).read_text(
        encoding="utf-8")
    directory.mkdir(parents=True, exist_ok=True)
    (directory / TEMPLATE_NAME).write_text(page_template(original), encoding="utf-8")
    return directory
