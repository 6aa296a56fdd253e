"""Reading the runtime's launch line without ever letting its token out (no runtime needed)."""

from __future__ import annotations

import pytest

from dsh_tui.remote import EndpointError, parse_endpoint
from dsh_tui.remote.stream import expand

TOKEN = "fuv1dXr7Dpp3COkE0UUhNU00LnhZLlS939lq2J7l7j4"


@pytest.mark.parametrize("text", [
    f"dsh web: http://127.0.0.1:39449/?token={TOKEN}",
    f"  dsh web: http://127.0.0.1:39449/?token={TOKEN}\n",
    f"http://127.0.0.1:39449/?token={TOKEN}",
    f"127.0.0.1:39449/?token={TOKEN}",
])
def test_the_printed_line_or_its_url(text: str) -> None:
    endpoint = parse_endpoint(text)
    assert endpoint.base == "http://127.0.0.1:39449"
    assert endpoint.where == "127.0.0.1:39449"
    assert endpoint.token.reveal() == TOKEN
    assert TOKEN not in repr(endpoint) and TOKEN not in str(endpoint.token)


def test_the_token_may_come_apart_from_the_url() -> None:
    endpoint = parse_endpoint("http://127.0.0.1:39449", token=f"{TOKEN}\n")
    assert endpoint.token.reveal() == TOKEN


@pytest.mark.parametrize("text, why", [
    ("http://127.0.0.1:39449/", "no launch token"),
    ("ftp://127.0.0.1:1/?token=x", "expected the runtime's line"),
    ("http://127.0.0.1:99999/?token=x", "bad port"),
    ("http://127.0.0.1:1/?token=a%0Ab", "characters a runtime never prints"),
])
def test_what_is_wrong_is_said_without_the_token(text: str, why: str) -> None:
    with pytest.raises(EndpointError, match=why) as error:
        parse_endpoint(text)
    assert "a%0Ab" not in str(error.value)


def test_redaction_covers_the_raw_and_the_url_encoded_token() -> None:
    endpoint = parse_endpoint(f"http://127.0.0.1:1/?token={TOKEN}=")
    text = f"GET /connect?token={TOKEN}%3D failed; token {TOKEN}="
    assert TOKEN not in endpoint.redact(text)


def test_a_packed_stream_expands_to_the_chunks_it_stands_for() -> None:
    packed = [{"type": "chunk", "time": 10, "chunk": {"type": "block-start", "index": 0,
                                                      "blockType": "text"}},
              {"type": "text-chunks", "time0": 11, "index": 0, "dt": [5, 7],
               "texts": ["one,", " two,", " three"]},
              {"type": "tool-call-chunks", "time0": 30, "index": 1, "id": "c1", "name": "read",
               "dt": [1], "args": ["{\"pa", "th\": 1}"]},
              {"type": "something-newer"}]
    assert list(expand(packed)) == [
        (10, {"type": "block-start", "index": 0, "blockType": "text"}),
        (11, {"type": "text-delta", "index": 0, "text": "one,"}),
        (16, {"type": "text-delta", "index": 0, "text": " two,"}),
        (23, {"type": "text-delta", "index": 0, "text": " three"}),
        (30, {"type": "tool-call-delta", "index": 1, "argumentsDelta": "{\"pa", "id": "c1",
              "name": "read"}),
        (31, {"type": "tool-call-delta", "index": 1, "argumentsDelta": "th\": 1}"}),
    ]


def test_attach_reads_the_token_from_a_file_or_says_what_is_missing(tmp_path, monkeypatch,
                                                                    capsys) -> None:
    from dsh_tui.cli import main

    monkeypatch.delenv("DSH_WEB_TOKEN", raising=False)
    monkeypatch.setenv("DSH_TUI_CONFIG", str(tmp_path / "none.toml"))
    assert main(["attach", "http://127.0.0.1:9"]) == 2  # no token anywhere, no terminal
    assert "no launch token" in capsys.readouterr().err
    assert main(["attach", "http://127.0.0.1:9", "--token-file", str(tmp_path / "nope")]) == 2
    assert "cannot read --token-file" in capsys.readouterr().err
    secret = tmp_path / "token"
    secret.write_text(f"{TOKEN}\n")
    assert main(["attach", "http://127.0.0.1:9", "--token-file", str(secret)]) == 2
    err = capsys.readouterr().err  # the token was read; the app needs a terminal first
    assert "needs a terminal" in err and TOKEN not in err
    monkeypatch.setenv("DSH_WEB_TOKEN", TOKEN)
    assert main(["attach", "http://127.0.0.1:9", "--runtime-model", "flash"]) == 2
    assert "--runtime-model needs PROVIDER/MODEL" in capsys.readouterr().err
