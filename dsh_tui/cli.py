"""The `dsh-tui` command line: the app, and the commands that view, list, export, serve or
attach to sessions (the list is on `build_parser`, the help is `dsh-tui --help`).

Every ID is read alike (`dsh_tui.lookup`): an id, an id prefix or a title. Imports are
deferred: `--version` must answer without loading Textual, and a mistake (a broken config
file, an unknown provider) is reported as one line naming the problem, never as a
traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dsh_tui.ui.state.config import UiConfig
    from dsh_tui.ui.state.routes import Route

PROVIDERS = ("demo", "deepseek", "openai-compatible")
DEFAULT_MODELS = {"demo": "demo", "deepseek": "deepseek-v4-flash"}
EXIT_USAGE = 2


class CliError(Exception):
    """A problem the person can fix; printed as one line, exit code 2. `details` are
    printed under it, one per line (the candidates of an ambiguous --resume)."""

    def __init__(self, message: str, details: list[str] | None = None) -> None:
        super().__init__(message)
        self.details = list(details or [])


PICK = "\0pick"
"""`--resume` given without a value: choose from a list."""


def version() -> str:
    try:
        from importlib.metadata import version as dist_version

        return dist_version("dsh-tui")
    except Exception:
        return "0.1.0"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # one line, not usage + error
        raise CliError(f"{message} (dsh-tui --help lists the options)")


def _global_options(parser: argparse.ArgumentParser, *, after: bool = False) -> None:
    """The options every command takes. Added to the main parser (defaults None) and, with
    `after`, to each subcommand with no default, so `dsh-tui sessions --data-dir X` works
    like `dsh-tui --data-dir X sessions` and a value given before is not reset after."""
    extra: dict[str, Any] = {"default": argparse.SUPPRESS} if after else {}
    parser.add_argument("--provider", help="demo, deepseek or openai-compatible "
                                           "(default: deepseek with DEEPSEEK_API_KEY, else demo)",
                        **extra)
    parser.add_argument("--route", metavar="NAME", help="a route from the config file's "
                                                        "[routes.NAME] tables", **extra)
    parser.add_argument("--model", help="model name (deepseek default: deepseek-v4-flash)",
                        **extra)
    parser.add_argument("--base-url", help="an OpenAI-compatible server (vLLM, llama.cpp, "
                                           "Ollama…)", **extra)
    parser.add_argument("--theme", help="dark, light, high-contrast or any Textual theme",
                        **extra)
    parser.add_argument("--resume", metavar="ID", nargs="?", const=PICK,
                        help="reopen a saved workspace or session by id, id prefix or title "
                             "(no value: pick from a list)", **extra)
    parser.add_argument("-c", "--continue", dest="continue_", action="store_true",
                        help="reopen the most recent workspace of this directory (--cwd)",
                        **extra)
    parser.add_argument("--cwd", type=Path, help="the working directory agents are stored "
                                                 "under and work in (default: the current one)",
                        **extra)
    parser.add_argument("--config", type=Path, help="config file (default: the platformdirs "
                                                    "config dir's dsh-tui/config.toml)", **extra)
    parser.add_argument("--data-dir", type=Path, help="where sessions are saved (default: the "
                                                      "platformdirs data dir)", **extra)


def build_parser() -> argparse.ArgumentParser:
    """The parser for every command:

        dsh-tui                      the app: DeepSeek when DEEPSEEK_API_KEY is set, else demo
        dsh-tui -c / --continue      reopen this directory's most recent workspace, whole
        dsh-tui --resume [ID|TITLE]  reopen a workspace (or a session's) by id prefix or title;
                                     without one, pick it from a list
        dsh-tui view ID|FILE         a saved session (or any log, ours or upstream's), read-only
        dsh-tui sessions [--json]    saved workspaces and sessions, as trees
        dsh-tui export ID|FILE [--format md|jsonl] [-o OUT]
                                     a saved session (or any log) as Markdown or plain JSONL
        dsh-tui serve [--host H] [--port P] [--trusted-host NAME]
                                     the app in a browser (textual-serve): one app per tab,
                                     for whoever opens the link with the token it prints
        dsh-tui attach LINE|URL [--runtime-model PROVIDER/MODEL]
                                     drive the sessions of a running `dsh --profile web`: give
                                     the line it printed, or its URL with the token in
                                     $DSH_WEB_TOKEN, in --token-file, or typed when asked
        dsh-tui --version
    """
    parser = _Parser(prog="dsh-tui", description="Watch and steer several LLM agents at once.")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    _global_options(parser)
    commands = parser.add_subparsers(dest="command", parser_class=_Parser)
    view = commands.add_parser("view", help="open a session read-only")
    view.add_argument("file", metavar="ID|FILE",
                      help="a saved session (id, id prefix or title, as for --resume) or "
                           "any log file")
    sessions = commands.add_parser("sessions", help="saved workspaces and sessions, as trees")
    sessions.add_argument("--json", action="store_true", help="JSON for scripts")
    export = commands.add_parser("export", help="write a session as Markdown or plain JSONL")
    export.add_argument("session", metavar="ID|FILE",
                        help="a saved session (id, id prefix or title, as for --resume) or "
                             "a log file")
    export.add_argument("--format", choices=("md", "jsonl"), default="md",
                        help="md: the transcript (default); jsonl: the log, decompressed")
    export.add_argument("-o", "--output", type=Path, metavar="OUT",
                        help="write here instead of standard output")
    serve = commands.add_parser("serve", help="serve the app to a browser (textual-serve)")
    serve.add_argument("--host", default="127.0.0.1",
                       help="the address to listen on (default 127.0.0.1: this machine only)")
    serve.add_argument("--port", type=int, default=8000, help="default 8000")
    serve.add_argument("--trusted-host", action="append", metavar="NAME",
                       help="also answer to this host name (a reverse proxy's, or this "
                            "machine's name on the network); repeatable")
    attach = commands.add_parser("attach", help="drive the sessions of a running dsh runtime")
    attach.add_argument("target", metavar="LINE|URL",
                        help="the line `dsh --profile web` printed (dsh web: http://…?token=…) "
                             "or its URL; safer: the URL without the token, which then comes "
                             "from $DSH_WEB_TOKEN, --token-file or a prompt")
    attach.add_argument("--token-file", type=Path, metavar="FILE",
                        help="read the launch token from FILE (first line)")
    attach.add_argument("--runtime-model", metavar="PROVIDER/MODEL",
                        help="the runtime route for sessions created here (default: the "
                             "runtime's own default)")
    for command in (view, sessions, export, serve, attach):
        _global_options(command, after=True)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        if args.version:
            print(f"dsh-tui {version()}")
            return 0
        if args.command == "view":
            return run_view(args)
        if args.command == "sessions":
            return list_sessions(args)
        if args.command == "export":
            return export_session(args)
        if args.command == "serve":
            return serve_app(args)
        if args.command == "attach":
            return run_attach(args)
        return run_app(args)
    except CliError as error:
        from dsh_tui.harness.safe_text import one_line

        # One line, whatever the message quotes (a path, a config value, a server's words).
        print(f"dsh-tui: {one_line(str(error), 2000)}", file=sys.stderr)
        for detail in error.details:
            print(f"  {one_line(detail, 400)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130


# ---- pieces ---------------------------------------------------------------------------------


def load_settings(args: argparse.Namespace) -> UiConfig:
    from dsh_tui.ui.state.config import ConfigError, load_config

    try:
        config = load_config(args.config)
    except ConfigError as error:
        raise CliError(f"bad config file: {error}") from None
    if config.keys:
        from dsh_tui.ui.keycheck import binding_ids, keymap_problems

        problems = keymap_problems(config.keys, binding_ids())
        if problems:
            raise CliError(f"bad config file: {config.path}: {problems[0]}")
    if args.theme:
        config.theme = args.theme
    return config


def resolve_route(args: argparse.Namespace, config: UiConfig,
                  env: Mapping[str, str] = os.environ) -> tuple[str, str]:
    """(provider, model) of the default route (see `choose_route`)."""
    route = choose_route(args, config, env)
    return route.name, route.model or ""


def choose_route(args: argparse.Namespace, config: UiConfig,
                 env: Mapping[str, str] = os.environ) -> Route:
    """The default route for new agents: `--route`, else the `--provider`/`--base-url`
    flags, else the config's `route`, else its `provider`/`model`, else DeepSeek when
    DEEPSEEK_API_KEY is set, else the demo model. `--model` overrides the model."""
    from dsh_tui.ui.state.routes import PROVIDER_KINDS

    name = getattr(args, "route", None)
    if name is not None:
        if args.provider or args.base_url:
            raise CliError("--route already names the provider and server; drop --provider "
                           "and --base-url (or drop --route)")
        route = config.routes.get(name)
        if route is None and name in PROVIDER_KINDS:
            route = _builtin(name, args, config, env)
        if route is None:
            usable = ["demo"] + (["deepseek"] if env.get("DEEPSEEK_API_KEY") else []) + \
                (["openai-compatible"] if config.base_url else [])
            known = ", ".join(dict.fromkeys([*config.routes, *usable]))
            raise CliError(f'unknown route "{name}" (known: {known}; routes are [routes.NAME] '
                           f"tables in {config.path or 'the config file'})")
    elif args.provider or args.base_url or config.route is None:
        route = _builtin(None, args, config, env)
    else:
        route = config.routes.get(config.route) or _builtin(config.route, args, config, env)
    if args.model:
        from dataclasses import replace

        route = replace(route, model=args.model)
    _check_key(route, env)
    return route


def _builtin(provider: str | None, args: argparse.Namespace, config: UiConfig,
             env: Mapping[str, str]) -> Route:
    """A built-in route (demo, deepseek, openai-compatible) from the flags and the config's
    top-level provider/model/base_url, as before routes existed."""
    from dsh_tui.ui.state.routes import builtin_route

    has_key = bool(env.get("DEEPSEEK_API_KEY"))
    provider = provider or args.provider or config.provider or \
        ("deepseek" if has_key else "demo")
    if provider == "deepseek-official":
        provider = "deepseek"
    if provider not in PROVIDERS:
        raise CliError(f'unknown provider "{provider}" (choose demo, deepseek or '
                       "openai-compatible)")
    if provider == "deepseek" and env.get("DEEPSEEK_BASE_URL"):
        from dsh_tui.ui.state.config import base_url_problem

        why = base_url_problem(env["DEEPSEEK_BASE_URL"])
        if why is not None:
            raise CliError(f"DEEPSEEK_BASE_URL {why}")
    base_url = args.base_url or config.base_url
    if args.base_url is not None:
        from dsh_tui.ui.state.config import base_url_problem

        why = base_url_problem(args.base_url)
        if why is not None:
            raise CliError(f"--base-url {why}")
    if provider == "openai-compatible" and not base_url:
        raise CliError("provider openai-compatible needs --base-url (or base_url in the "
                       "config file)")
    model = args.model or (config.model if config.provider in (None, provider) else None) \
        or DEFAULT_MODELS.get(provider)
    if not model:
        raise CliError(f"provider {provider} needs --model")
    return builtin_route(provider, model=model,
                         base_url=base_url if provider == "openai-compatible" else None)


def _check_key(route: Route, env: Mapping[str, str]) -> None:
    """A route that needs a key the environment lacks is refused before the app starts
    (by the variable's name; the value is never printed)."""
    missing = route.missing_key(env)
    if missing:
        what = "provider deepseek" if route.name == "deepseek" else f"route {route.name}"
        raise CliError(f"{what} needs {missing} in the environment")


def offered_routes(config: UiConfig, default: Route,
                   env: Mapping[str, str] = os.environ) -> dict[str, Route]:
    """Every route a new agent may take in this run: the default first, the configured
    ones, and the built-in demo (and deepseek with a key)."""
    from dsh_tui.ui.state.routes import builtin_route

    routes: dict[str, Route] = {default.name: default}
    for name, route in config.routes.items():
        routes.setdefault(name, route)
    routes.setdefault("demo", builtin_route("demo"))
    if env.get("DEEPSEEK_API_KEY"):
        routes.setdefault("deepseek", builtin_route("deepseek"))
    return routes


def _persistence(args: argparse.Namespace) -> Any:
    from dsh_tui.harness.persistence import JsonlPersistence

    if args.data_dir is not None and args.data_dir.exists() and not args.data_dir.is_dir():
        raise CliError(f"--data-dir {args.data_dir} is a file, not a directory")
    try:
        return JsonlPersistence(args.data_dir)
    except (OSError, ValueError) as error:
        raise CliError(f"cannot use the sessions directory: {error}") from None


def _check_ids(args: argparse.Namespace) -> None:
    for flag, value in (("--resume", getattr(args, "resume", None)),
                        ("export", getattr(args, "session", None)),
                        ("view", getattr(args, "file", None))):
        if value is not None and not value.strip():
            raise CliError(f"{flag} needs a session id (dsh-tui sessions lists them), "
                           "not an empty string")


def _check_terminal() -> None:
    """The app draws on a terminal; without one it would wait forever for keys."""
    if os.environ.get("TEXTUAL_DRIVER"):
        return  # textual-serve (or a test harness) supplies its own driver
    for name, stream in (("input", sys.stdin), ("output", sys.stdout)):
        try:
            tty = stream is not None and stream.isatty()
        except (ValueError, OSError):
            tty = False
        if not tty:
            raise CliError(f"the app needs a terminal, and standard {name} is not one "
                           "(use sessions or export for scripts)")


def run_app(args: argparse.Namespace) -> int:
    import asyncio

    _check_ids(args)
    config = load_settings(args)
    route = choose_route(args, config)
    config.routes = offered_routes(config, route)
    config.route = route.name
    config.provider, config.model = route.name, route.model
    config.base_url = args.base_url or config.base_url
    persistence = _persistence(args)
    from dsh_tui.reopen import app_cwd, choose_target

    cwd = app_cwd(args)
    target = choose_target(args, persistence, cwd)  # None: a new workspace
    if target is None and (args.resume is not None or args.continue_):
        return 0  # the picker was closed without a choice
    if target is None:
        _check_terminal()  # before a new session is made; a resume reports its session first
    elif args.cwd is None and target.group.cwd and os.path.isdir(target.group.cwd):
        cwd = target.group.cwd  # a reopened workspace works where it was left
    return asyncio.run(_run_app(args, config, persistence, target, cwd))


async def _run_app(args: argparse.Namespace, config: UiConfig, persistence: Any,
                   target: Any, cwd: str) -> int:
    from dsh_tui.compose import build_context, default_providers, leave, stop_saving
    from dsh_tui.reopen import (
        first_agent,
        left_target,
        offer_summary,
        open_workspace,
        record_options,
        reopen_message,
    )
    from dsh_tui.serve.tab import TabWriter
    from dsh_tui.ui.app import DshApp
    from dsh_tui.ui.state.workspace import WorkspaceOffer

    routes = config.routes
    try:
        providers = default_providers(demo_speed=config.demo_speed, base_url=config.base_url,
                                      routes=routes.values())
    except ValueError as error:
        raise CliError(str(error)) from None
    if config.provider not in providers:
        raise CliError(f"provider {config.provider} is not available")
    ctx = build_context(providers=providers, persistence=persistence, workspace=cwd)
    runtime = ctx.services["loop"]
    route = routes[config.route or ""]
    runtime.default_options = route.agent_options()
    runtime.routes = {name: r.agent_options() for name, r in routes.items()}
    # Served in a browser tab (`dsh-tui serve`): the page learns whether leaving would end
    # work, and a reloaded page is offered the saved workspace the page before it had.
    tab = TabWriter.from_environment()
    left = tab.left_workspace() if tab is not None and target is None else None
    offered = left_target(persistence, left) if left is not None else None
    workspace = None

    async def reopen_offered() -> None:
        nonlocal workspace
        assert offered is not None
        workspace = await open_workspace(ctx, persistence, offered, cwd,
                                         patience=OFFER_PATIENCE_S)
        record_options(workspace, args)

    async def fresh() -> None:
        nonlocal workspace
        workspace = await first_agent(ctx, persistence, cwd, config.provider,
                                      config.model, route.agent_options())
        record_options(workspace, args)

    try:
        if target is not None:
            workspace = await open_workspace(ctx, persistence, target, cwd)
            record_options(workspace, args)
        elif offered is None:
            await fresh()
        _check_terminal()  # a resumed session's own problems (open elsewhere) are named first
        app = DshApp(ctx, config)
        if tab is not None:
            app.page_state = tab.write
        if offered is not None and offered.group.id is not None:
            app.offer = WorkspaceOffer(offered.group.id, offer_summary(offered),
                                       reopen_offered, fresh)
        with _leave_on_signals(app, lambda: stop_saving(ctx)):
            await app.run_async()
    finally:
        with _log_records_kept_off_the_terminal():
            await leave(ctx)  # quit is not dispose: no inbox is discarded on the way out
            if workspace is not None:
                workspace.close()
    lost = getattr(persistence, "lost_on_exit", None) or \
        (workspace.lost_on_exit if workspace is not None else None)
    if lost:  # the app showed "not saved"; the exit says so too, in one line
        raise CliError(lost)
    message = reopen_message(args, workspace)
    if message:  # on the real terminal, after the app gave back the screen
        try:
            sys.stdout.flush()
            os.write(sys.stdout.fileno(), (message + "\n").encode("utf-8", "replace"))
        except (OSError, ValueError):
            pass  # the terminal is gone (closed window, SIGHUP): nobody to tell
    return 0


@contextlib.contextmanager
def _log_records_kept_off_the_terminal() -> Iterator[None]:
    """While the app winds down its records must not reach the terminal the app just gave
    back: Python prints records nobody handles to stderr, so a failed last write would
    appear twice, once as a log record and once as the exit's own line (`lost_on_exit`).
    A handler that drops them is enough; handlers a caller configured still get them."""
    import logging

    logger = logging.getLogger("dsh_tui")
    quiet = logging.NullHandler()
    logger.addHandler(quiet)
    try:
        yield
    finally:
        logger.removeHandler(quiet)


@contextlib.contextmanager
def _leave_on_signals(app: Any, stop_saving: Any) -> Iterator[None]:
    """SIGTERM (a kill, a shutdown) and SIGHUP (the terminal closed) leave the app as ctrl+q
    does, keeping every inbox. Saving stops at once, before the app winds down, so the log
    is complete even if the terminal is already gone and restoring it fails."""
    import asyncio
    import signal

    loop = asyncio.get_running_loop()

    def on_signal() -> None:
        stop_saving()
        app.exit()

    wanted = [s for s in (signal.SIGTERM, signal.SIGHUP) if s is not None]
    installed = []
    for signum in wanted:
        try:
            loop.add_signal_handler(signum, on_signal)
            installed.append(signum)
        except (NotImplementedError, RuntimeError, ValueError):
            pass  # not the main thread, or no such signal here: the default stays
    try:
        yield
    finally:
        for signum in installed:
            loop.remove_signal_handler(signum)


def _attach_token(args: argparse.Namespace, target: str) -> str | None:
    """The launch token when it is not in the URL: --token-file, $DSH_WEB_TOKEN, or typed at
    a prompt that does not echo (never in argv, a log or an error message)."""
    from dsh_tui.remote.endpoint import TOKEN_ENV

    if "token=" in target:
        return None
    if args.token_file is not None:
        try:
            lines = args.token_file.read_text(encoding="utf-8").splitlines()
        except OSError as error:
            raise CliError(f"cannot read --token-file {args.token_file}: "
                           f"{error.strerror or error}") from None
        return lines[0].strip() if lines else ""
    if os.environ.get(TOKEN_ENV):
        return os.environ[TOKEN_ENV]
    if sys.stdin is not None and sys.stdin.isatty():
        import getpass

        try:
            return getpass.getpass("launch token (the part after ?token= of the runtime's "
                                   "line): ")
        except (EOFError, KeyboardInterrupt):
            return None
    return None


def run_attach(args: argparse.Namespace) -> int:
    import asyncio

    from dsh_tui.remote import EndpointError, parse_endpoint

    target = args.target.strip()
    try:
        endpoint = parse_endpoint(target, token=_attach_token(args, target))
    except EndpointError as error:
        raise CliError(str(error)) from None
    route = None
    if args.runtime_model:
        provider, _, model = args.runtime_model.partition("/")
        if not provider or not model:
            raise CliError("--runtime-model needs PROVIDER/MODEL (e.g. deepseek/deepseek-flash)")
        route = (provider, model)
    config = load_settings(args)
    _check_terminal()
    cwd = str(args.cwd) if args.cwd is not None else None
    return asyncio.run(_run_attach(endpoint, config, route, cwd))


async def _run_attach(endpoint: Any, config: UiConfig, route: tuple[str, str] | None,
                      cwd: str | None) -> int:
    from dsh_tui.compose import attach_world
    from dsh_tui.remote import RemoteError
    from dsh_tui.ui.app import DshApp

    try:
        ctx = await attach_world(endpoint, cwd=cwd, route=route)
    except RemoteError as error:
        raise CliError(f"cannot attach: {error}") from None
    try:
        app = DshApp(ctx, config)
        with _leave_on_signals(app, lambda: None):
            await app.run_async()
    finally:
        with _log_records_kept_off_the_terminal():
            await ctx.scope.dispose()  # closes the connection; the runtime keeps every session
    return 0


def run_view(args: argparse.Namespace) -> int:
    from dsh_tui.compose import open_log
    from dsh_tui.lookup import session_log

    _check_ids(args)
    path, _ = session_log(_persistence(args), args.file)
    config = load_settings(args)
    config.path = None if args.theme else config.path
    try:
        ctx = open_log(path)
    except Exception as error:
        raise CliError(f"cannot open {path}: {error}") from None
    from dsh_tui.ui.app import DshApp

    _check_terminal()
    DshApp(ctx, config).run()
    return 0


def list_sessions(args: argparse.Namespace) -> int:
    from dsh_tui.reopen import print_sessions

    return print_sessions(args, _persistence(args))


def export_session(args: argparse.Namespace) -> int:
    from dsh_tui.harness.persistence import SessionLogError, read_session_log
    from dsh_tui.ui.state.export import export_jsonl, export_markdown

    _check_ids(args)
    from dsh_tui.lookup import session_log

    path, by_name = session_log(_persistence(args), args.session)
    try:
        header, events = read_session_log(path)
    except (OSError, SessionLogError) as error:
        raise CliError(f"cannot read {path}: {error}") from None
    if args.format == "jsonl":
        text = "".join(line + "\n" for line in export_jsonl(header, events))
    else:
        # The tree's sub-agents live in the data dir: found for a saved session (or a file
        # exported with --data-dir); a lone file is exported alone.
        by_id = by_name or args.data_dir is not None
        text = export_markdown(header, events, children=_child_logs(args) if by_id else None)
    if args.output is None:
        sys.stdout.write(text)
        return 0
    try:
        args.output.write_text(text, encoding="utf-8")
    except OSError as error:
        raise CliError(f"cannot write {args.output}: {error}") from None
    print(f"wrote {args.output} ({len(events):,} events, {args.format})", file=sys.stderr)
    return 0


def _child_logs(args: argparse.Namespace) -> Any:
    """`children(session_id)` for the Markdown export: the sub-agent sessions saved in the
    data dir under that parent (a child whose log cannot be read is left out)."""
    from dsh_tui.harness.persistence import SessionLogError, read_session_log

    persistence = _persistence(args)
    headers = persistence.list_sessions()

    def children(session_id: str) -> list[tuple[Any, Any]]:
        out = []
        for header in headers:
            if header.get("parentSession") == session_id and header.get("origin") == "subagent":
                try:
                    out.append(read_session_log(persistence.path_for(header)))
                except (OSError, SessionLogError):
                    continue
        return out

    return children


OFFER_PATIENCE_S = 10.0
"""How long a reloaded page's app waits for the app it replaced to let go of the workspace
it offers (that app quits as its socket closes, saving on the way)."""

SERVED_OPTIONS = ("route", "provider", "model", "base_url", "theme", "config", "data_dir",
                  "cwd")
"""The options `serve` hands to every app it starts."""


def serve_command(args: argparse.Namespace) -> str:
    """The shell command textual-serve runs for each browser tab: this Python, this package,
    the options given to `serve` (the API key stays in the environment, never in argv)."""
    import shlex

    argv = [sys.executable, "-m", "dsh_tui"]
    for name in SERVED_OPTIONS:
        value = getattr(args, name, None)
        if value is not None:
            argv += ["--" + name.replace("_", "-"), str(value)]
    return shlex.join(argv)


def serve_app(args: argparse.Namespace) -> int:
    # Check the options here, where a mistake is one line, not in every browser tab.
    if args.resume is not None or args.continue_:
        raise CliError("serve starts a new workspace in every tab, so --resume and -c do not "
                       "apply (open saved sessions from the sessions screen, f3, in a tab)")
    choose_route(args, load_settings(args))
    if not 0 < args.port < 65536:
        raise CliError(f"--port {args.port} is not a TCP port")
    trusted = [name.strip() for name in args.trusted_host or ()]
    if any(not name or "/" in name or " " in name for name in trusted):
        raise CliError("--trusted-host takes a host name or address, as a browser's address "
                       "bar shows it (no scheme, no path)")
    try:
        import textual_serve  # noqa: F401

        from dsh_tui.serve.server import exposure, serve
    except ImportError:
        raise CliError("serve needs textual-serve: pip install 'dsh-tui[serve]'") from None
    warning = exposure(args.host, args.cwd or Path.cwd())
    if warning:
        print(f"dsh-tui serve: {warning}", file=sys.stderr, flush=True)
    sys.unraisablehook = _quiet_closed_loop(sys.unraisablehook)
    try:
        serve(serve_command(args), host=args.host, port=args.port, trusted_hosts=trusted)
    except OSError as error:
        raise CliError(f"cannot listen on {args.host}:{args.port}: "
                       f"{error.strerror or error}") from None
    return 0


def _quiet_closed_loop(default: Any) -> Any:
    """Ctrl+C with tabs open stops the server's loop before the transports of the apps it
    ran are collected; each then reports "Event loop is closed" from `__del__` as a
    traceback. The apps are gone by then: keep that noise off the screen, nothing else."""

    def hook(unraisable: Any) -> None:
        error = unraisable.exc_value
        if isinstance(error, RuntimeError) and str(error) == "Event loop is closed":
            return
        default(unraisable)

    return hook


if __name__ == "__main__":
    sys.exit(main())
