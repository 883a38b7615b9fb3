#!/usr/bin/env python3
"""Real-browser test of `vzero serve` (issue 46): headless Chromium driven by Selenium.

It trains a small empire run (8 games), starts a second run that is being written while the
Run page is open, starts `vzero serve --port 0 --run SMALL --run LIVE`, and then:

* HTTP (urllib/http.client, no browser): bad input gets a JSON error and changes nothing
  (illegal move, garbled FEN, unknown game, a body over 1 MB, garbled JSON, a bot spec that is
  not allowed), path traversal and unknown runs get 404;
* Run page of the run being written: the numbers change without a reload;
* Openings page of the small run: clicking a move row moves the line and the board;
* Analyse page (from "Analyse this position" on the Play page): lines and simulations appear;
* Play, by clicking and dragging as a person does (never by calling the API for a move):
  an spqr game with a Dictator double move (and a pass), a shogun game with a drop and a
  promotion through the #promo dialog, an empire game with a takeback and a flip, each to its
  end; each game's PGN (pre#pgn) is replayed by `vzero replay` to the same moves, result and
  final FEN as the page's game;
* the median latency of POST /bot (model:0:64 when the run has a model, else alphabeta:1).

Screenshots go to $OUT_DIR (default target/browser-test/). The last lines are
`browser_test: move latency: ...` and `browser_test: N passed, M failed`; exit status 1 when any
check failed.

Usage: scripts/browser_test.py [--vzero target/release/vzero] [--out DIR] [--keep]
(scripts/browser-test.sh installs what is missing and runs it).
"""
import argparse
import http.client
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.parse
from pathlib import Path

# Selenium Manager must never download a browser or a driver: the driver is named explicitly.
os.environ["SE_OFFLINE"] = "true"

ROOT = Path(__file__).resolve().parent.parent

# Positions the games start from (each checked with `vzero replay` while writing this test):
# spqr: White's king walks up the l-file; l6-l7 makes it a Dictator (enemy territory), then
# double moves l7-l8-l9, l9-l10 + pass, l10-l11-l12 (the last rank: campmate, 1-0). Black has a
# king far away and three pawns; nothing it does in three moves can stop the king.
SPQR_FEN = "k11/12/12/ppp9/12/12/11K/12/12/12/12/12 w - - 0 1"
# shogun: a6-a7+ promotes (the #promo dialog: a7 or a7+), Black's only move is Kh8-h7, then the
# rook in hand dropped on h1 mates (the g-file is the rook g1's).
SHOGUN_FEN = "7k/8/P7/8/8/8/8/K5R1[R] w - - 0 1"
# empire: White's king walks b5-b6-b7-b8 (campmate: the flag region is rank 8) before Black's
# king (h4) can reach rank 1 or face it.
EMPIRE_FEN = "8/7p/8/1K6/7k/8/8/8 w - - 0 1"


# ----------------------------------------------------------------------------------------------
# Results


class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = []

    def ok(self, name, cond, detail=""):
        if cond:
            self.passed += 1
            print(f"PASS {name}", flush=True)
        else:
            self.failed.append(name)
            print(f"FAIL {name}" + (f": {detail}" if detail else ""), flush=True)
        return bool(cond)

    def fail(self, name, detail):
        return self.ok(name, False, detail)


class Abort(Exception):
    """A section cannot go on (its reason is already recorded as a failed check)."""


# ----------------------------------------------------------------------------------------------
# HTTP


class Http:
    def __init__(self, base):
        u = urllib.parse.urlsplit(base)
        self.host, self.port = u.hostname, u.port

    def request(self, method, path, body=None, headers=None, timeout=120):
        """Sends `path` exactly as given (no normalisation). Returns (status, headers, bytes)."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        try:
            h = dict(headers or {})
            if isinstance(body, (dict, list)):
                body = json.dumps(body).encode()
                h.setdefault("Content-Type", "application/json")
            elif isinstance(body, str):
                body = body.encode()
            sent_error = None
            try:
                conn.request(method, path, body=body, headers=h)
            except (BrokenPipeError, ConnectionResetError) as e:
                # The server may answer (413) and close before reading a huge body: read what it said.
                sent_error = e
            try:
                r = conn.getresponse()
                return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
            except Exception:
                if sent_error is not None:
                    raise ConnectionError(f"{method} {path[:80]}: connection closed while sending ({sent_error}) and no answer")
                raise
        finally:
            conn.close()

    def json(self, method, path, body=None, expect=200):
        status, _, data = self.request(method, path, body)
        if status != expect:
            raise RuntimeError(f"{method} {path} answered {status}: {data[:300]!r}")
        return json.loads(data)

    def state(self, gid):
        return self.json("GET", f"/api/games/{gid}")


def json_error(status, headers, data):
    """The message of a JSON error answer, or None when the answer is not one."""
    if "json" not in headers.get("content-type", ""):
        return None
    try:
        j = json.loads(data)
    except ValueError:
        return None
    if isinstance(j, dict) and isinstance(j.get("error"), str) and j["error"].strip():
        return j["error"]
    return None


# ----------------------------------------------------------------------------------------------
# Helpers


def fen_board(fen, files, ranks):
    """{square: (LETTER, color, promoted)} from a FEN's board field."""
    board = fen.split()[0].split("[")[0]
    rows = board.split("/")
    out = {}
    for i, row in enumerate(rows):
        rank = ranks - i
        f = 0
        j = 0
        promoted = False
        while j < len(row):
            c = row[j]
            if c.isdigit():
                k = j
                while k < len(row) and row[k].isdigit():
                    k += 1
                f += int(row[j:k])
                j = k
                continue
            if c == "+":
                promoted = True
                j += 1
                continue
            if c == "~":
                j += 1
                continue
            out[f"{chr(ord('a') + f)}{rank}"] = (c.upper(), "w" if c.isupper() else "b", promoted)
            promoted = False
            f += 1
            j += 1
    return out


def state_board(st):
    return {p["sq"]: (p["piece"].upper(), p["color"], bool(p["promoted"])) for p in st["board"]}


def rank_of(sq):
    return int(sq[1:])


def result_from_replay(last):
    """'1-0', '0-1', '1/2-1/2' or '*' from `vzero replay`'s last line (side-to-move view)."""
    side = last["fen"].split()[1]
    r = last["result"]
    if r == "draw":
        return "1/2-1/2"
    if r == "ongoing":
        return "*"
    white_won = (r == "win") == (side == "w")
    return "1-0" if white_won else "0-1"


PASS_TOKENS = {"0000", "--", "pass", "@@@@", "Z0", "(pass)"}


def parse_pgn(text):
    tags = {}
    lines = text.replace("\r\n", "\n").split("\n")
    body = []
    for line in lines:
        m = re.match(r'^\s*\[(\w+)\s+"((?:[^"\\]|\\.)*)"\]\s*$', line)
        if m:
            tags[m.group(1)] = m.group(2).replace('\\"', '"').replace("\\\\", "\\")
        elif not line.startswith("%"):
            body.append(line.split(";", 1)[0])
    movetext = re.sub(r"\{[^}]*\}", " ", " ".join(body))
    tokens = []
    result_token = None
    for t in movetext.split():
        t = re.sub(r"^\d+\.(\.\.)?", "", t)
        if not t:
            continue
        if t in ("1-0", "0-1", "1/2-1/2", "*"):
            result_token = t
            continue
        if re.match(r"^\$\d+$", t):
            continue
        tokens.append(t.rstrip("!?"))
    return tags, tokens, result_token


# ----------------------------------------------------------------------------------------------
# The test


class BrowserTest:
    def __init__(self, args):
        self.args = args
        self.c = Checks()
        self.out = Path(args.out).resolve()
        self.out.mkdir(parents=True, exist_ok=True)
        # Outputs of an earlier run (only the names this test writes).
        for f in list(self.out.glob("fail-*.png")) + [self.out / n for n in (
                "play.png", "analyse.png", "openings.png", "run.png", "run-later.png", "spqr.pgn", "shogun.pgn", "empire.pgn")]:
            f.unlink(missing_ok=True)
        self.vzero = str(Path(args.vzero).resolve())
        self.tmp = Path(tempfile.mkdtemp(prefix="vzero-browser-test-"))
        self.procs = []
        self.driver = None
        self.screenshots = []
        self.latency = None
        self.info = None
        self.model_spec = None
        self.live_id = 1

    # -- processes -----------------------------------------------------------------------------

    def start(self, cmd, log_name):
        log = open(self.out / log_name, "wb")
        p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=self.tmp)
        p._log = log  # noqa: SLF001 (closed in stop)
        self.procs.append(p)
        return p

    def stop(self, p):
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        p._log.close()

    def cleanup(self):
        if self.driver is not None:
            try:
                self.driver.quit()
            except Exception:
                pass
        for p in self.procs:
            self.stop(p)
        if not self.args.keep:
            shutil.rmtree(self.tmp, ignore_errors=True)
        else:
            print(f"browser_test: kept {self.tmp}")

    def prepare_runs(self):
        t0 = time.monotonic()
        self.small = self.tmp / "small"
        r = subprocess.run([self.vzero, "train", "--variant", "empire", "--run", str(self.small), "--games", "8", "--quiet", "--teacher", "off"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=self.tmp, timeout=300)
        (self.out / "train-small.log").write_bytes(r.stdout)
        if r.returncode != 0:
            raise RuntimeError(f"vzero train (small run) failed ({r.returncode}): {r.stdout.decode(errors='replace')[-1500:]}")
        print(f"browser_test: small run trained in {time.monotonic() - t0:.0f} s ({self.small})", flush=True)
        # The live run: small batches of games and small chunks so that its numbers move within
        # seconds, one self-play worker (2 cores: the browser and the bots need the other).
        self.live = self.tmp / "live"
        cfg = (ROOT / "configs" / "empire.toml").read_text()
        cfg2 = re.sub(r"(?m)^games_per_worker\s*=.*$", "games_per_worker = 4", cfg)
        cfg2 = re.sub(r"(?m)^rows_per_chunk\s*=.*$", "rows_per_chunk = 100", cfg2)
        cfg_path = self.tmp / "live.toml"
        cfg_path.write_text(cfg2)
        cmd = [self.vzero, "train", "--run", str(self.live), "--minutes", "1", "--workers", "1", "--quiet", "--teacher", "off", "--config", str(cfg_path)]
        self.live_proc = self.start(cmd, "train-live.log")
        deadline = time.monotonic() + 60

        def live_ready():
            ck = self.live / "checkpoints"
            return (self.live / "config.toml").exists() and ck.is_dir() and any(ck.glob("*.json"))

        while not live_ready():
            if self.live_proc.poll() is not None:
                raise RuntimeError(f"vzero train (live run) exited {self.live_proc.returncode}: {(self.out / 'train-live.log').read_text(errors='replace')[-1500:]}")
            if time.monotonic() > deadline:
                raise RuntimeError("the live run wrote no config.toml and checkpoint within 60 s")
            time.sleep(0.2)

    def start_server(self):
        cmd = [self.vzero, "serve", "--port", "0", "--run", str(self.small), "--run", str(self.live)]
        self.server = self.start(cmd, "serve.log")
        deadline = time.monotonic() + 60
        log = self.out / "serve.log"
        while True:
            text = log.read_text(errors="replace")
            m = re.search(r"listening on (http://[^\s/]+)/", text)
            if m:
                self.base = m.group(1) + "/"
                break
            if self.server.poll() is not None:
                raise RuntimeError(f"vzero serve exited {self.server.returncode} before listening: {text[-2000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"vzero serve printed no 'listening on http://HOST:PORT/' line within 60 s: {text[-2000:]}")
            time.sleep(0.1)
        print(f"browser_test: vzero serve at {self.base}", flush=True)
        self.http = Http(self.base)
        self.info = self.http.json("GET", "/api/info")
        specs = [b.get("spec") for b in self.info.get("bots", [])]
        models = self.info.get("models", [])
        if "model:0:64" in specs and models:
            self.model_spec = "model:0:64"
        runs = self.info.get("runs", [])
        self.c.ok("GET /api/info lists both runs", len(runs) == 2 and all(r.get("variant") == "empire" for r in runs), json.dumps(runs)[:300])
        self.c.ok("GET /api/info offers the small run's network as model:0:64", self.model_spec is not None,
                  f"bots {specs}, models {json.dumps(models)[:300]}")

    # -- HTTP checks ---------------------------------------------------------------------------

    def http_checks(self):
        h = self.http
        st0 = h.json("POST", "/api/games", {"variant": "empire", "fen": None, "white": "human", "black": "human"})
        gid = st0["id"]
        h.json("POST", f"/api/games/{gid}/move", {"uci": st0["legal"][0]["uci"]})
        before = h.state(gid)

        def bad(name, method, path, body=None, raw=None, statuses=(400,), headers=None, unchanged=True):
            try:
                status, hd, data = h.request(method, path, raw if raw is not None else body, headers=headers)
            except Exception as e:  # noqa: BLE001
                self.c.fail(name, f"no answer: {e}")
                return
            err = json_error(status, hd, data)
            ok = status in statuses and err is not None
            detail = f"status {status} (want {'/'.join(map(str, statuses))}), content-type {hd.get('content-type')!r}, body {data[:200]!r}"
            if ok and unchanged:
                after = h.state(gid)
                if after != before:
                    ok = False
                    detail = f"the game changed: before {json.dumps(before)[:300]} after {json.dumps(after)[:300]}"
            self.c.ok(f"HTTP {name}: {status} {err!r}"[:160] if ok else f"HTTP {name}", ok, detail)

        legal = {m["uci"] for m in before["legal"]}
        illegal = next(u for u in ["a1a8", "e1e8", "h1h8", "a3a6", "d1d7"] if u not in legal)
        bad("illegal move gives 400", "POST", f"/api/games/{gid}/move", {"uci": illegal})
        bad("garbled move text gives 400", "POST", f"/api/games/{gid}/move", {"uci": "zz99"})
        bad("garbled FEN gives 400", "POST", "/api/games", {"variant": "empire", "fen": "rnbq/xx9/ w KQ - zz", "white": "human", "black": "human"})
        bad("unknown variant gives 400", "POST", "/api/games", {"variant": "no-such-variant", "fen": None, "white": "human", "black": "human"})
        bad("unknown game id gives 404 (GET)", "GET", "/api/games/g999999", statuses=(404,))
        bad("unknown game id gives 404 (move)", "POST", "/api/games/g999999/move", {"uci": "a3a4"}, statuses=(404,))
        bad("unknown game id gives 404 (pgn)", "GET", "/api/games/g999999/pgn", statuses=(404,))
        huge = b'{"uci": "' + b"a" * (1_500_000) + b'"}'
        bad("body over 1 MB gives 413 or 400", "POST", f"/api/games/{gid}/move", raw=huge, statuses=(413, 400), headers={"Content-Type": "application/json"})
        bad("garbled JSON body gives 400", "POST", f"/api/games/{gid}/move", raw=b'{"uci": "a3a4"', headers={"Content-Type": "application/json"})
        bad("JSON body of the wrong shape gives 400", "POST", f"/api/games/{gid}/move", raw=b'[1, 2, 3]', headers={"Content-Type": "application/json"})
        for spec in ["uci:/bin/sh", "net:/etc/passwd:64", "alphabeta:99", "mcts:0", "model:99:64"]:
            bad(f"bot spec {spec!r} is refused with 400", "POST", "/api/games", {"variant": "empire", "fen": None, "white": spec, "black": "human"})
        bad("POST /bot with a person to move gives 400", "POST", f"/api/games/{gid}/bot")
        # Undo on a fresh game: nothing to take back.
        fresh = h.json("POST", "/api/games", {"variant": "empire", "fen": None, "white": "human", "black": "human"})
        status, hd, data = h.request("POST", f"/api/games/{fresh['id']}/undo")
        self.c.ok("HTTP undo with nothing to take back gives 400", status == 400 and json_error(status, hd, data), f"status {status} body {data[:200]!r}")
        # Paths that must not reach the file system or anything else.
        for path in ["/assets/../../etc/passwd", "/assets/..%2F..%2F..%2Fetc%2Fpasswd", "/assets/%2e%2e/%2e%2e/etc/passwd",
                     "/../../../../etc/passwd", "/assets/app.js/../../../etc/passwd"]:
            try:
                status, hd, data = h.request("GET", path)
            except Exception as e:  # noqa: BLE001
                self.c.fail(f"HTTP path traversal {path}", f"no answer: {e}")
                continue
            self.c.ok(f"HTTP path traversal {path} gives 404", status == 404 and b"root:" not in data, f"status {status} body {data[:200]!r}")
        for path in ["/api/runs/99/status", "/api/runs/99/openings", "/api/runs/99/events"]:
            status, hd, data = h.request("GET", path)
            self.c.ok(f"HTTP {path} gives 404 JSON", status == 404 and json_error(status, hd, data), f"status {status} body {data[:200]!r}")
        status, hd, data = h.request("GET", "/api/runs/0/openings?moves=zz99")
        self.c.ok("HTTP openings of an illegal line gives 400 JSON", status == 400 and json_error(status, hd, data), f"status {status} body {data[:200]!r}")
        # The pages and assets are there.
        for path in ["/", "/analyse", "/openings", "/run", "/assets/app.js", "/assets/style.css"]:
            status, hd, data = h.request("GET", path)
            self.c.ok(f"HTTP GET {path} gives 200", status == 200 and len(data) > 0, f"status {status}")
        after = h.state(gid)
        self.c.ok("HTTP the game is unchanged after every bad request", after == before)

    # -- the browser ---------------------------------------------------------------------------

    def start_browser(self):
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        chromium = self.args.chromium
        driver_path = self.args.chromedriver
        for p in (chromium, driver_path):
            if not Path(p).exists():
                raise RuntimeError(f"{p} not found: install Debian's chromium and chromium-driver (scripts/setup.sh --browser)")
        opts = webdriver.ChromeOptions()
        opts.binary_location = chromium
        for a in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1280,900",
                  "--force-device-scale-factor=1", "--no-first-run", "--no-default-browser-check", "--disable-extensions",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync", "--mute-audio"]:
            opts.add_argument(a)
        opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        service = Service(executable_path=driver_path, log_output=str(self.out / "chromedriver.log"))
        self.driver = webdriver.Chrome(service=service, options=opts)
        d = self.driver
        d.set_page_load_timeout(60)
        d.set_script_timeout(60)
        # A 1280x900 viewport whatever the window's frame takes.
        d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False})
        # Records (for the test only) the id of every game the page's fetch calls answer with,
        # and how long each POST .../bot took as the page saw it.
        d.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": r"""
(() => {
  window.__vz = {lastGame: null, bot: [], errors: []};
  const orig = window.fetch;
  window.fetch = async function (input, init) {
    const url = typeof input === 'string' ? input : (input && input.url) || String(input);
    const t0 = performance.now();
    const r = await orig.apply(this, arguments);
    try {
      if (/\/api\/games/.test(url)) {
        if (/\/bot(\?|$)/.test(url)) window.__vz.bot.push(performance.now() - t0);
        r.clone().json().then(j => { if (j && typeof j.id === 'string') window.__vz.lastGame = j.id; }).catch(() => {});
      }
    } catch (e) {}
    return r;
  };
  window.addEventListener('error', e => window.__vz.errors.push(String(e.message)));
  window.addEventListener('unhandledrejection', e => window.__vz.errors.push('unhandled rejection: ' + String(e.reason && (e.reason.stack || e.reason))));
})();
"""})

    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    def wait(self, cond, timeout, message):
        from selenium.common.exceptions import StaleElementReferenceException, NoSuchElementException, JavascriptException
        from selenium.webdriver.support.ui import WebDriverWait
        return WebDriverWait(self.driver, timeout, poll_frequency=0.2,
                             ignored_exceptions=(StaleElementReferenceException, NoSuchElementException, JavascriptException)).until(cond, message)

    def busy(self):
        return self.js("return document.body ? document.body.dataset.busy : undefined")

    def wait_idle(self, timeout=30, what="the page"):
        self.wait(lambda d: self.busy() == "0", timeout,
                  f"{what}: document.body.dataset.busy did not become \"0\" within {timeout} s (it is {self.busy()!r})")

    def css(self, sel):
        from selenium.webdriver.common.by import By
        return self.driver.find_element(By.CSS_SELECTOR, sel)

    def csss(self, sel):
        from selenium.webdriver.common.by import By
        return self.driver.find_elements(By.CSS_SELECTOR, sel)

    def visible(self, sel):
        els = self.csss(sel)
        return bool(els) and els[0].is_displayed()

    def screenshot(self, name):
        path = self.out / f"{name}.png"
        self.driver.save_screenshot(str(path))
        self.screenshots.append(path)
        return path

    def section(self, name, fn):
        t0 = time.monotonic()
        print(f"== {name}", flush=True)
        try:
            fn()
        except Abort:
            pass
        except Exception as e:  # noqa: BLE001
            self.c.fail(f"{name}: ran to its end", f"{type(e).__name__}: {str(e).strip()[:1500]}")
            traceback.print_exc(limit=4)
            if self.driver is not None:
                try:
                    p = self.screenshot(f"fail-{re.sub(r'[^a-z0-9]+', '-', name.lower()).strip('-')}")
                    print(f"browser_test: screenshot of the failure: {p}")
                except Exception:  # noqa: BLE001
                    pass
        print(f"   ({name}: {time.monotonic() - t0:.1f} s)", flush=True)

    def open_page(self, path=""):
        self.driver.get(self.base + path)
        self.wait(lambda d: self.js("return document.readyState") == "complete", 30, "the page did not load")
        self.wait_idle(30, f"GET /{path}")

    def tab(self, name):
        """Clicks a#tab-NAME; checks the URL and that only #page-NAME is shown, and no reload."""
        self.js("window.__noReload = 'yes'")
        self.css(f"a#tab-{name}").click()
        want = "/" if name == "play" else f"/{name}"
        try:
            self.wait(lambda d: self.visible(f"#page-{name}"), 10, f"#page-{name} did not show")
            path = self.js("return location.pathname")
            shown = [p for p in ["play", "analyse", "openings", "run"] if self.visible(f"#page-{p}")]
            ok = shown == [name] and (path == want or (name == "play" and path in ("/", "/play"))) and self.js("return window.__noReload") == "yes"
            self.c.ok(f"tab {name}: a#tab-{name} shows #page-{name} alone at {want} without a reload", ok,
                      f"visible sections {shown}, location.pathname {path!r}, reloaded: {self.js('return window.__noReload') != 'yes'}")
        except Exception as e:  # noqa: BLE001
            self.c.fail(f"tab {name}: a#tab-{name} shows #page-{name}", str(e)[:300])
            raise Abort()

    # -- Run page ------------------------------------------------------------------------------

    def run_page(self):
        self.open_page("")
        self.tab("run")
        runs = self.info["runs"]
        live_id = next((r["id"] for r in runs if str(self.live) in r.get("name", "") or r.get("name", "").endswith("live")), 1)
        self.live_id = live_id
        from selenium.webdriver.support.ui import Select
        sel = Select(self.css("select#run-select"))
        try:
            sel.select_by_value(str(live_id))
        except Exception:  # noqa: BLE001
            self.c.fail("run: select#run-select has the live run", f"options {[o.get_attribute('value') for o in sel.options]}")
            raise Abort()
        ids = ["run-games", "run-rows", "run-steps", "run-gen", "run-rate", "run-loss", "run-updated"]

        def numbers():
            return self.js("return arguments[0].map(i => { const e = document.getElementById(i); return e ? e.textContent.trim() : null; })", ids)

        self.wait(lambda d: (numbers()[0] or "") != "" and re.search(r"\d", numbers()[0] or ""), 20, "#run-games shows no number")
        self.js("window.__noReload = 'run'")
        first = numbers()
        print(f"   run page at first: {dict(zip(ids, first))}")
        t0 = time.monotonic()
        try:
            self.wait(lambda d: numbers()[:3] != first[:3], 60, "none of #run-games, #run-rows, #run-steps changed within 60 s")
            changed = numbers()
            dt = time.monotonic() - t0
            moved = [i for i, a, b in zip(ids[:3], first[:3], changed[:3]) if a != b]
            self.c.ok(f"run: {', '.join('#' + m for m in moved)} changed within 60 s without a reload ({dt:.0f} s)",
                      self.js("return window.__noReload") == "run", "the page was reloaded")
            print(f"   run page after {dt:.0f} s: {dict(zip(ids, changed))}")
        except Exception as e:  # noqa: BLE001
            self.c.fail("run: the numbers change within 60 s without a reload", f"{e}; first {dict(zip(ids, first))}, now {dict(zip(ids, numbers()))}")
            changed = numbers()
        api = self.http.json("GET", f"/api/runs/{live_id}/status")
        page_games = int(re.sub(r"[^\d]", "", changed[0]) or -1)
        self.c.ok("run: #run-games agrees with GET /api/runs/{id}/status", 0 <= page_games <= api["games"],
                  f"page {changed[0]!r}, API games {api['games']}")
        self.c.ok("run: #run-updated shows the time of the last update", bool(changed[6]), f"{changed[6]!r}")
        self.c.ok("run: svg#run-elo and svg#run-loss-plot are drawn", bool(self.csss("svg#run-elo")) and bool(self.csss("svg#run-loss-plot")))
        procs = self.csss("ul#run-procs li")
        self.c.ok("run: ul#run-procs lists the training process", len(procs) >= 1, f"{len(procs)} items")
        self.shot_run = self.screenshot("run")  # (and run-later.png at the end, once the run has trained)

    def run_page_later(self):
        """The live run once it has trained a while: a screenshot with its loss and processes."""
        from selenium.webdriver.support.ui import Select
        self.tab("run")
        Select(self.css("select#run-select")).select_by_value(str(self.live_id))
        try:
            self.wait(lambda d: re.search(r"\d", self.css("#run-steps").text or ""), 15, "")
        except Exception:  # noqa: BLE001
            pass
        self.screenshot("run-later")

    # -- Openings page -------------------------------------------------------------------------

    def openings_page(self):
        # Direct URL first: the single page app must pick the tab from location.pathname.
        self.open_page("openings")
        shown = [p for p in ["play", "analyse", "openings", "run"] if self.visible(f"#page-{p}")]
        self.c.ok("openings: GET /openings opens the Openings tab", shown == ["openings"], f"visible sections {shown}")
        from selenium.webdriver.support.ui import Select
        sel = Select(self.css("select#op-run"))
        try:
            sel.select_by_value("0")
        except Exception:  # noqa: BLE001
            self.c.fail("openings: select#op-run offers the small run (value 0)", f"options {[o.get_attribute('value') for o in sel.options]}")
            raise Abort()
        self.wait_idle(30, "openings")
        api = self.http.json("GET", "/api/runs/0/openings?moves=")
        if not api.get("moves"):
            self.c.fail("openings: the small run has opening moves", json.dumps(api)[:300])
            raise Abort()

        def rows():
            return self.js("return Array.from(document.querySelectorAll('table#op-moves tr.op-move')).map(r => r.getAttribute('data-uci'))")

        want = [m["uci"] for m in api["moves"]]
        try:
            self.wait(lambda d: rows() == want, 20, "table#op-moves does not list the API's moves")
            self.c.ok(f"openings: table#op-moves lists the {len(want)} first moves, most played first", True)
        except Exception as e:  # noqa: BLE001
            self.c.fail("openings: table#op-moves lists the first moves, most played first", f"{e}: page {rows()}, API {want}")
        first = api["moves"][0]
        row = self.css(f'table#op-moves tr.op-move[data-uci="{first["uci"]}"]')
        cells = [c.text for c in row.find_elements("css selector", "td")]
        self.c.ok("openings: a row shows the move and its game count", any(first["san"] in c for c in cells) and any(str(first["games"]) in c for c in cells),
                  f"cells {cells}, API {first}")
        row.click()
        after = self.http.json("GET", f"/api/runs/0/openings?moves={first['uci']}")
        want2 = [m["uci"] for m in after["moves"]]
        try:
            self.wait(lambda d: first["san"] in self.css("#op-line").text and rows() == want2, 20,
                      "after clicking the row, #op-line and the rows do not follow")
            self.c.ok(f"openings: clicking {first['san']} puts it on #op-line and lists its {len(want2)} replies", True)
        except Exception as e:  # noqa: BLE001
            self.c.fail("openings: clicking a row moves the line and the table", f"{e}: #op-line {self.css('#op-line').text!r}, rows {rows()}, API {want2}")
        files, ranks = 8, 8
        want_board = fen_board(after["fen"], files, ranks)

        def op_board():
            raw = self.js("return Array.from(document.querySelectorAll('svg#op-board g.piece')).map(g => [g.getAttribute('data-sq'), g.getAttribute('data-piece'), g.getAttribute('data-color'), g.getAttribute('data-promoted')])")
            return {sq: (p.upper(), c, pr in ("true", "1")) for sq, p, c, pr in raw}

        try:
            self.wait(lambda d: op_board() == want_board, 10, "svg#op-board does not show the position after the move")
            self.c.ok(f"openings: svg#op-board shows the position after {first['san']} ({first['uci']})", True)
        except Exception as e:  # noqa: BLE001
            got = op_board()
            diff = {k: (got.get(k), want_board.get(k)) for k in set(got) | set(want_board) if got.get(k) != want_board.get(k)}
            self.c.fail("openings: svg#op-board follows the line", f"{e}: differences (page, FEN) {diff}")
        self.shot_openings = self.screenshot("openings")
        # Back to the start through the line (#op-line is clickable: its first step is the start).
        steps = self.csss("#op-line a, #op-line button, #op-line .op-step, #op-line [data-index]")
        if not steps:
            self.c.fail("openings: #op-line has a clickable start", f"#op-line HTML {self.css('#op-line').get_attribute('innerHTML')[:300]!r}")
            return
        steps[0].click()
        start_board = fen_board(api["fen"], files, ranks) if api.get("fen") else None
        try:
            self.wait(lambda d: rows() == want and (start_board is None or op_board() == start_board), 20, "")
            self.c.ok("openings: clicking the start of #op-line goes back (rows and board)", True)
        except Exception:  # noqa: BLE001
            self.c.fail("openings: clicking the start of #op-line goes back (rows and board)", f"rows {rows()}, want {want}")

    # -- Play: common ----------------------------------------------------------------------------

    def new_game(self, variant, white, black, fen):
        from selenium.webdriver.support.ui import Select
        if self.js("return location.pathname") not in ("/", "/play") or not self.visible("#page-play"):
            self.tab("play")
        self.wait_idle(30, "play page")
        vs = Select(self.css("select#variant"))
        try:
            vs.select_by_value(variant)
        except Exception:  # noqa: BLE001
            self.c.fail(f"{variant}: select#variant offers {variant}", f"options {[o.get_attribute('value') for o in vs.options]}")
            raise Abort()
        self.wait_idle(30, "variant change")
        for sel_id, spec in (("white", white), ("black", black)):
            def has(d, sel_id=sel_id, spec=spec):
                return spec in [o.get_attribute("value") for o in Select(self.css(f"select#{sel_id}")).options]
            try:
                self.wait(has, 10, f"select#{sel_id} has no option {spec}")
            except Exception:  # noqa: BLE001
                self.c.fail(f"{variant}: select#{sel_id} offers {spec}", f"options {[o.get_attribute('value') for o in Select(self.css(f'select#{sel_id}')).options]}")
                raise Abort()
            Select(self.css(f"select#{sel_id}")).select_by_value(spec)
        fen_in = self.css("input#fen")
        fen_in.clear()
        if fen:
            fen_in.send_keys(fen)
        self.js("window.__vz.lastGame = null")
        self.css("button#new-game").click()
        self.wait(lambda d: self.js("return window.__vz.lastGame"), 30, "the page created no game (no /api/games answer seen)")
        gid = self.js("return window.__vz.lastGame")
        st = self.settle(gid)
        if fen:
            self.c.ok(f"{variant}: new game from input#fen starts at that FEN", st["start_fen"].split()[:2] == fen.split()[:2] and st["variant"] == variant,
                      f"start_fen {st['start_fen']!r}, wanted {fen!r}")
        self.c.ok(f"{variant}: the game has the players chosen", st["white"] == white and st["black"] == black, f"white {st['white']}, black {st['black']}")
        return gid, st

    def page_moves(self):
        return self.js("return Array.from(document.querySelectorAll('ol#moves li.move')).map(li => [li.getAttribute('data-uci'), li.textContent.trim()])")

    def page_board(self):
        raw = self.js("return Array.from(document.querySelectorAll('svg#board g.piece')).map(g => [g.getAttribute('data-sq'), g.getAttribute('data-piece'), g.getAttribute('data-color'), g.getAttribute('data-promoted')])")
        return {sq: ((p or "").upper(), c, pr in ("true", "1")) for sq, p, c, pr in raw}

    def settle(self, gid, timeout=60):
        """Waits until the page is idle, the game is at a person's turn (or over) and the page
        shows the server's moves and board. Returns the state."""
        seen = {}

        def ok(d):
            if self.busy() != "0":
                seen["why"] = f"busy {self.busy()!r}"
                return False
            st = self.http.state(gid)
            seen["state"] = st
            if st["result"] is None and st["to_move_is_bot"]:
                seen["why"] = "a bot is to move"
                return False
            pm = self.page_moves()
            if len(pm) != len(st["moves"]):
                seen["why"] = f"ol#moves has {len(pm)} li.move, the game {len(st['moves'])} moves"
                return False
            if self.page_board() != state_board(st):
                seen["why"] = "svg#board differs from the game's board"
                return False
            return st

        try:
            return self.wait(ok, timeout, "")
        except Exception:  # noqa: BLE001
            st = seen.get("state")
            raise RuntimeError(f"game {gid} did not settle within {timeout} s: {seen.get('why')}; "
                               f"state moves {[m['uci'] for m in st['moves']] if st else '?'}, page moves {self.page_moves()}, "
                               f"board page {sorted(self.page_board().items())} vs state {sorted(state_board(st).items()) if st else '?'}")

    def board_ready(self):
        self.js("const b = document.querySelector('svg#board'); if (b) b.scrollIntoView({block: 'center'});")

    def piece_el(self, sq):
        return self.css(f'svg#board g.piece[data-sq="{sq}"]')

    def square_el(self, sq):
        return self.css(f'svg#board rect.square[data-sq="{sq}"]')

    def click_at(self, el):
        from selenium.webdriver.common.action_chains import ActionChains
        self.js("arguments[0].scrollIntoView({block: 'nearest'})", el)
        ActionChains(self.driver).move_to_element(el).click().perform()

    def expect_target(self, sq, what):
        try:
            self.wait(lambda d: self.csss(f'svg#board rect.target[data-sq="{sq}"]'), 5, f"no rect.target on {sq} after selecting {what}")
            return True
        except Exception as e:  # noqa: BLE001
            marked = self.js("return Array.from(document.querySelectorAll('svg#board rect.target')).map(r => r.getAttribute('data-sq'))")
            self.c.fail(f"board: selecting {what} marks {sq} as a legal target", f"{e}; targets marked: {marked}")
            return False

    def human_move(self, gid, st, mv, how):
        """Plays legal move `mv` (from the state's list) on the page: how = 'click' or 'drag'
        (a drop is always pocket click + square click, a pass the #pass button). Handles #promo.
        Returns the state once settled."""
        from selenium.webdriver.common.action_chains import ActionChains
        n0 = len(st["moves"])
        self.board_ready()
        same = [m for m in st["legal"] if m["from"] == mv["from"] and m["to"] == mv["to"] and m["drop"] == mv["drop"] and not m["pass"]]
        if mv["pass"]:
            self.wait(lambda d: self.visible("button#pass"), 5, "button#pass is not visible while a pass is legal")
            self.css("button#pass").click()
        elif mv["drop"]:
            color = st["side_to_move"]
            pocket_sel = f'#pocket-{color} .pocket-piece[data-piece="{mv["drop"]}"]'
            self.click_at(self.css(pocket_sel))
            if self.expect_target(mv["to"], f"the pocket {mv['drop']}"):
                # (the page redraws the pocket on a selection: look it up again)
                cls = self.css(pocket_sel).get_attribute("class") or ""
                self.c.ok(f"board: the pocket piece {mv['drop']} is selected (class selected)", "selected" in cls.split(), f"class {cls!r}")
            self.click_at(self.square_el(mv["to"]))
        elif how == "drag":
            # Press on the piece, move to the target square's centre, release. The page redraws
            # the whole board when a piece is pressed (its selection), so the target's element
            # would be stale by then: the drag goes by the offset between the two centres,
            # measured just before.
            src = self.piece_el(mv["from"])
            dx, dy = self.js("const a = arguments[0].getBoundingClientRect(), b = arguments[1].getBoundingClientRect();"
                             "return [b.left + b.width / 2 - (a.left + a.width / 2), b.top + b.height / 2 - (a.top + a.height / 2)];",
                             src, self.square_el(mv["to"]))
            ActionChains(self.driver).drag_and_drop_by_offset(src, round(dx), round(dy)).perform()
        else:
            self.click_at(self.piece_el(mv["from"]))
            if self.expect_target(mv["to"], f"the piece on {mv['from']}"):
                sel = self.csss(f'svg#board rect.square.selected[data-sq="{mv["from"]}"]') or self.csss(f'svg#board .selected[data-sq="{mv["from"]}"]')
                self.c.ok(f"board: the piece on {mv['from']} is marked selected", bool(sel))
            self.click_at(self.square_el(mv["to"]))
        if len(same) > 1:
            try:
                self.wait(lambda d: self.visible("#promo") and self.csss("#promo button.promo-choice"), 5, "#promo did not appear")
            except Exception as e:  # noqa: BLE001
                self.c.fail(f"promotion: #promo offers the choice for {mv['from']}{mv['to']}", str(e))
                raise Abort()
            choices = self.js("return Array.from(document.querySelectorAll('#promo button.promo-choice')).map(b => [b.getAttribute('data-uci'), b.textContent.trim()])")
            want = sorted([m["uci"], m["san"]] for m in same)
            self.c.ok(f"promotion: #promo offers {', '.join(s for _, s in want)}", sorted(list(c) for c in choices) == want, f"page {choices}, legal {want}")
            self.css(f'#promo button.promo-choice[data-uci="{mv["uci"]}"]').click()
        st2 = self.settle(gid)
        played = [m["uci"] for m in st2["moves"]]
        if len(played) <= n0 or played[n0] != mv["uci"]:
            raise RuntimeError(f"the page did not play {mv['uci']} ({how}): the game's moves are {played[n0 - 2 if n0 >= 2 else 0:]} (had {n0})")
        return st2

    def check_moves_list(self, name, st):
        pm = self.page_moves()
        want = [[m["uci"], m["san"]] for m in st["moves"]]
        self.c.ok(f"{name}: ol#moves lists every ply (data-uci, SAN)", [list(x) for x in pm] == want, f"page {pm}, game {want}")

    def check_result(self, name, st):
        res = st["result"]
        if not res:
            self.c.fail(f"{name}: the game ended", f"result {res}")
            return
        try:
            self.wait(lambda d: self.css("#result").get_attribute("data-result") == res["result"], 10, "")
            ok = True
        except Exception:  # noqa: BLE001
            ok = False
        el = self.css("#result")
        text = el.text.strip()
        self.c.ok(f"{name}: #result shows {text!r}", ok and text.startswith(res["result"]) and res["reason"] in text,
                  f"#result text {text!r} data-result {el.get_attribute('data-result')!r}; game {res}")

    def check_pgn(self, name, gid, st):
        """pre#pgn: written to a file, replayed by `vzero replay`: same moves, result and final FEN."""
        try:
            self.wait(lambda d: st["result"]["result"] in self.css("pre#pgn").text, 10, "")
        except Exception:  # noqa: BLE001
            pass
        pgn = self.css("pre#pgn").get_attribute("textContent")
        path = self.out / f"{name}.pgn"
        path.write_text(pgn)
        print(f"   {name}: PGN written to {path}")
        status, _, server_pgn = self.http.request("GET", f"/api/games/{gid}/pgn")
        self.c.ok(f"{name}: pre#pgn is the game's PGN (GET /api/games/{{id}}/pgn)", status == 200 and server_pgn.decode().strip() == pgn.strip(),
                  f"status {status}; page {pgn[:300]!r} server {server_pgn[:300]!r}")
        href = self.css("a#pgn-download").get_attribute("href") or ""
        self.c.ok(f"{name}: a#pgn-download links the PGN", bool(href), f"href {href!r}")
        tags, tokens, result_token = parse_pgn(pgn)
        res = st["result"]["result"] if st["result"] else "*"
        self.c.ok(f"{name}: PGN tags Variant, FEN, White, Black, Result", tags.get("Variant") == st["variant"] and tags.get("FEN") == st["start_fen"]
                  and tags.get("Result") == res and result_token == res and "White" in tags and "Black" in tags,
                  f"tags {tags}, result token {result_token!r}; game {st['variant']} {st['start_fen']!r} {res}")
        ucis = [m["uci"] for m in st["moves"]]
        sans = [m["san"] for m in st["moves"]]
        help_text = subprocess.run([self.vzero, "replay", "--help"], capture_output=True, text=True).stdout
        if "--pgn" in help_text:
            cmd = [self.vzero, "replay", "--pgn", str(path)]
            how = "--pgn"
        else:
            # `vzero replay` takes UCI moves: replay the page's own moves (li.move data-uci) from
            # the PGN's FEN tag and check that the PGN's movetext is the SAN (or UCI) replay gives.
            page_ucis = [u for u, _ in self.page_moves()]
            cmd = [self.vzero, "replay", "--variant", tags.get("Variant", st["variant"]), "--moves", " ".join(page_ucis)]
            if "FEN" in tags:
                cmd += ["--fen", tags["FEN"]]
            how = "--moves (the page's li.move data-uci) --fen (the PGN's FEN tag)"
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            self.c.fail(f"{name}: vzero replay {how} replays the PGN", f"exit {r.returncode}: {r.stderr.strip()[:500]}")
            return
        lines = [json.loads(x) for x in r.stdout.splitlines() if x.strip()]
        replay_sans = [x["san"] for x in lines[:-1]]
        last = lines[-1]
        norm = lambda xs: ["0000" if x in PASS_TOKENS else x for x in xs]  # noqa: E731
        # The contract says SAN movetext; vzero's own PGN files (and its reader) use UCI: either
        # is accepted as long as it is the game's moves, and the notation is named.
        notation = "SAN" if norm(tokens) == norm(replay_sans) else "UCI" if norm(tokens) == norm(ucis) else None
        self.c.ok(f"{name}: the PGN's movetext ({notation}) is the game's {len(ucis)} plies, and vzero replay {how} gives the game's SAN", notation is not None and norm(replay_sans) == norm(sans),
                  f"PGN {tokens}, replay SAN {replay_sans}, game SAN {sans}, game UCI {ucis}")
        self.c.ok(f"{name}: vzero replay ends at the game's FEN ({last['fen']})", last["fen"] == st["fen"], f"replay {last['fen']!r}, game {st['fen']!r}")
        self.c.ok(f"{name}: vzero replay gives the game's result ({result_from_replay(last)} {last.get('reason')})",
                  result_from_replay(last) == res and (not st["result"] or last.get("reason") == st["result"]["reason"]),
                  f"replay {last['result']} {last.get('reason')} (side {last['fen'].split()[1]}), game {st['result']}")

    # -- Play: spqr ----------------------------------------------------------------------------

    def king_up(self, st, prefer_same_file=True):
        k = next(p["sq"] for p in st["board"] if p["piece"] == "K" and p["color"] == "w")
        cands = [m for m in st["legal"] if m["from"] == k and not m["pass"] and m["to"] and rank_of(m["to"]) == rank_of(k) + 1 and not m["promotion"]]
        if not cands:
            raise RuntimeError(f"no king move up from {k}: legal {[m['uci'] for m in st['legal']]}")
        cands.sort(key=lambda m: (m["to"][0] != k[0]) if prefer_same_file else 0)
        return cands[0]

    def play_spqr(self):
        gid, st = self.new_game("spqr", "human", "alphabeta:1", SPQR_FEN)
        self.c.ok("spqr: button#pass is hidden while no pass is legal", not self.visible("button#pass"))
        self.c.ok("spqr: the 12x12 board has 144 rect.square", len(self.csss("svg#board rect.square")) == 144, f"{len(self.csss('svg#board rect.square'))}")
        plan = [("click", None), ("drag", "drag"), ("click", "pass"), ("drag", "click")]
        double = False
        for turn, (first_how, second) in enumerate(plan, 1):
            if st["result"]:
                break
            st = self.human_move(gid, st, self.king_up(st), first_how)
            if st["result"]:
                break
            if turn == 1:
                mv = st["moves"]
                fields = st["fen"].split()
                dictator = len(fields) > 6 and "K" in fields[6]
                self.c.ok(f"spqr: the king's first move into enemy territory ({mv[-2]['uci'] if len(mv) > 1 else '?'}) makes a Dictator (FEN field K) but no second step yet",
                          len(mv) >= 2 and mv[-2]["color"] == "w" and mv[-1]["color"] == "b" and st["pending_second_step"] is None and dictator,
                          f"moves {[(m['uci'], m['color']) for m in mv]}, pending {st['pending_second_step']}, FEN {st['fen']}")
                continue
            if st["pending_second_step"] is None or st["side_to_move"] != "w":
                self.c.fail(f"spqr: turn {turn}: a Dictator king move leaves a second step pending", f"pending {st['pending_second_step']!r}, side {st['side_to_move']}, FEN {st['fen']}")
                raise Abort()
            pass_visible = self.visible("button#pass")
            self.c.ok(f"spqr: turn {turn}: second step pending ({st['pending_second_step']}), button#pass shown", pass_visible)
            if turn == 2:
                self.shot_play = self.screenshot("play")
                print(f"   screenshot of the Play page mid double move: {self.shot_play}")
            if second == "pass":
                mv = next(m for m in st["legal"] if m["pass"])
                st = self.human_move(gid, st, mv, "click")
                self.c.ok("spqr: button#pass plays the pass (0000) and Black moves next", len(st["moves"]) >= 2 and st["moves"][-2]["uci"] == "0000" and st["moves"][-1]["color"] == "b",
                          f"moves {[m['uci'] for m in st['moves']]}")
            else:
                st = self.human_move(gid, st, self.king_up(st), second)
                double = True
        mv = st["moves"]
        pairs = [(a["uci"], b["uci"]) for a, b in zip(mv, mv[1:]) if a["color"] == "w" and b["color"] == "w" and "0000" not in (a["uci"], b["uci"])]
        self.c.ok(f"spqr: the human made a Dictator double move ({', '.join(a + ' ' + b for a, b in pairs)})", double and len(pairs) >= 1,
                  f"moves {[(m['uci'], m['color']) for m in mv]}")
        st = self.http.state(gid)
        self.c.ok(f"spqr: the game ended {st['result']}", st["result"] is not None and st["result"]["result"] == "1-0", f"result {st['result']}")
        self.check_result("spqr", st)
        self.check_moves_list("spqr", st)
        self.check_pgn("spqr", gid, st)

    # -- Play: shogun --------------------------------------------------------------------------

    def play_shogun(self):
        gid, st = self.new_game("shogun", "human", "alphabeta:1", SHOGUN_FEN)
        pw = self.csss('#pocket-w .pocket-piece[data-piece="R"]')
        self.c.ok("shogun: #pocket-w shows the rook in hand (data-count 1)", bool(pw) and pw[0].get_attribute("data-count") == "1" and pw[0].get_attribute("data-color") == "w",
                  f"{[(p.get_attribute('data-piece'), p.get_attribute('data-count')) for p in self.csss('#pocket-w .pocket-piece')]}")
        yb = self.js("const e = document.querySelector('#pocket-b'); return e ? e.getBoundingClientRect().top : null")
        yw = self.js("const e = document.querySelector('#pocket-w'); return e ? e.getBoundingClientRect().top : null")
        self.c.ok("shogun: the opponent's pocket (#pocket-b) is above White's", yb is not None and yw is not None and yb < yw, f"top of #pocket-b {yb}, #pocket-w {yw}")
        pawn = next(p["sq"] for p in st["board"] if p["piece"] == "P" and p["color"] == "w")
        promo = next(m for m in st["legal"] if m["from"] == pawn and m["promotion"] == "+")
        st = self.human_move(gid, st, promo, "click")
        to = promo["to"]
        g = self.csss(f'svg#board g.piece[data-sq="{to}"]')
        self.c.ok(f"shogun: the promoted pawn on {to} is drawn promoted (data-promoted)", bool(g) and g[0].get_attribute("data-promoted") in ("true", "1"),
                  f"{g[0].get_attribute('data-promoted') if g else 'no piece'}")
        if st["result"]:
            raise RuntimeError(f"the game ended early: {st['result']}")
        drop = next((m for m in st["legal"] if m["drop"] == "R" and m["to"] == "h1"), None) or next(m for m in st["legal"] if m["drop"])
        st = self.human_move(gid, st, drop, "click")
        self.c.ok(f"shogun: the drop {drop['uci']} empties the pocket", not self.csss('#pocket-w .pocket-piece[data-piece="R"]') or
                  self.csss('#pocket-w .pocket-piece[data-piece="R"]')[0].get_attribute("data-count") in ("0", None),
                  f"{[(p.get_attribute('data-piece'), p.get_attribute('data-count')) for p in self.csss('#pocket-w .pocket-piece')]}")
        self.c.ok(f"shogun: the game ended {st['result']}", st["result"] is not None and st["result"]["result"] == "1-0", f"{st['result']}")
        self.check_result("shogun", st)
        self.check_moves_list("shogun", st)
        self.check_pgn("shogun", gid, st)

    # -- Play: empire --------------------------------------------------------------------------

    def play_empire(self):
        black = self.model_spec or "alphabeta:1"
        gid, st = self.new_game("empire", "human", black, EMPIRE_FEN)
        start_board = state_board(st)
        # Flip and back.
        y = lambda sq: self.js("return arguments[0].getBoundingClientRect().top", self.square_el(sq))  # noqa: E731
        a1, a8 = y("a1"), y("a8")
        self.css("button#flip").click()
        try:
            self.wait(lambda d: y("a1") < y("a8"), 5, "")
        except Exception:  # noqa: BLE001
            pass
        self.c.ok("empire: rank 1 is drawn at the bottom, and button#flip puts it at the top", a1 > a8 and y("a1") < y("a8"),
                  f"before: a1 top {a1}, a8 top {a8}; after: a1 {y('a1')}, a8 {y('a8')}")
        self.css("button#flip").click()
        try:
            self.wait(lambda d: y("a1") > y("a8"), 5, "")
        except Exception:  # noqa: BLE001
            self.c.fail("empire: button#flip flips back", f"a1 {y('a1')}, a8 {y('a8')}")
        # A move, the bot's answer, then the takeback.
        st = self.human_move(gid, st, self.king_up(st), "drag")
        self.c.ok(f"empire: the bot ({black}) answered", len(st["moves"]) == 2 and st["moves"][1]["color"] == "b", f"{st['moves']}")
        self.css("button#takeback").click()
        try:
            self.wait(lambda d: len(self.page_moves()) == 0, 30, "")
        except Exception:  # noqa: BLE001
            pass
        st = self.settle(gid)
        self.c.ok("empire: button#takeback takes back the bot's move and the person's", st["moves"] == [] and state_board(st) == start_board and st["fen"] == st["start_fen"],
                  f"moves {st['moves']}, fen {st['fen']}")
        hows = ["click", "drag", "drag", "click", "drag", "click"]
        for how in hows:
            if st["result"]:
                break
            st = self.human_move(gid, st, self.king_up(st), how)
        self.c.ok(f"empire: the game ended {st['result']}", st["result"] is not None and st["result"]["result"] == "1-0", f"{st['result']}")
        self.check_result("empire", st)
        self.check_moves_list("empire", st)
        self.check_pgn("empire", gid, st)
        self.c.ok("empire: #status shows text", bool(self.css("#status").text.strip()), repr(self.css("#status").text))

    # -- Analyse -------------------------------------------------------------------------------

    def analyse_page(self):
        gid, st = self.new_game("empire", "human", "human", "")
        self.css("button#analyse-here").click()
        try:
            self.wait(lambda d: self.visible("#page-analyse") and self.js("return location.pathname") == "/analyse", 10, "")
            self.c.ok("analyse: button#analyse-here opens the Analyse tab at /analyse", True)
        except Exception:  # noqa: BLE001
            self.c.fail("analyse: button#analyse-here opens the Analyse tab at /analyse", f"pathname {self.js('return location.pathname')!r}")
            raise Abort()
        # (the contract says input#an-fen; the page has a textarea#an-fen: either is read here)
        fen = (self.css("#an-fen").get_attribute("value") or "").strip()
        self.c.ok("analyse: #an-fen holds the game's FEN", fen == st["fen"], f"{fen!r} vs {st['fen']!r}")
        from selenium.webdriver.support.ui import Select
        # values read in one script: the page may rebuild the options while they are read
        values = self.js("return [...document.querySelectorAll('select#an-model option')].map(o => o.value)")
        ms = Select(self.css("select#an-model"))
        used = "knowledge evaluator"
        if self.model_spec and "0" in values:
            ms.select_by_value("0")
            used = "model 0"
        self.css("button#an-start").click()

        def sims():
            m = re.search(r"\d[\d,]*", self.js("const e = document.querySelector('#an-sims'); return e ? e.innerText : ''"))
            return int(m.group(0).replace(",", "")) if m else 0

        def an_lines():
            # read in one script: the running analysis redraws the lines, so elements found
            # first and read later may already be gone (a stale element)
            return self.js("return [...document.querySelectorAll('ol#an-lines li')].map(li => li.innerText)")

        try:
            self.wait(lambda d: len(an_lines()) >= 1 and sims() > 0, 40, "")
            ok = True
        except Exception:  # noqa: BLE001
            ok = False
        lines = an_lines()
        self.c.ok(f"analyse: {used}: ol#an-lines and #an-sims fill ({sims()} sims, {len(lines)} lines)", ok,
                  f"#an-sims {self.css('#an-sims').text!r}, lines {lines[:3]}, #an-wdl {self.css('#an-wdl').text!r}")
        legal_sans = {m["san"] for m in st["legal"]}
        if lines:
            words = [re.sub(r"^\d+\.+", "", w) for w in lines[0].split()]
            named = [w for w in words if w in legal_sans]
            self.c.ok(f"analyse: the first line names a legal move ({named[0] if named else '-'})", bool(named),
                      f"line {lines[0]!r}, legal {sorted(legal_sans)}")
        self.c.ok("analyse: #an-wdl shows the W/D/L", bool(self.css("#an-wdl").text.strip()), repr(self.css("#an-wdl").text))
        self.shot_analyse = self.screenshot("analyse")
        stop = self.css("button#an-stop")
        if stop.is_displayed() and stop.is_enabled():
            stop.click()
        self.wait_idle(30, "analyse stop")
        self.tab("play")

    # -- Latency --------------------------------------------------------------------------------

    def measure_latency(self):
        spec = self.model_spec or "alphabeta:1"
        times = []
        gid = None
        while len(times) < 12:
            if gid is None:
                gid = self.http.json("POST", "/api/games", {"variant": "empire", "fen": None, "white": spec, "black": spec})["id"]
            t0 = time.perf_counter()
            st = self.http.json("POST", f"/api/games/{gid}/bot")
            times.append((time.perf_counter() - t0) * 1000)
            if st["result"]:
                gid = None
        med = statistics.median(times)
        self.latency = f"median {med:.0f} ms over {len(times)} POST /bot ({spec}, empire from the start, nothing else running)"
        page = self.js("return window.__vz.bot") if self.driver else []
        if page:
            self.latency += f"; as the page saw its bot moves: median {statistics.median(page):.0f} ms over {len(page)} (during the games, beside the live run)"
        self.c.ok(f"latency: POST /bot {spec}: median {med:.0f} ms", med < 10_000, f"{times}")

    def console_errors(self):
        errors = []
        try:
            for e in self.driver.get_log("browser"):
                if e.get("level") == "SEVERE" and "favicon" not in e.get("message", ""):
                    errors.append(e["message"])
        except Exception as ex:  # noqa: BLE001
            errors.append(f"(browser log not readable: {ex})")
        errors += self.js("return window.__vz ? window.__vz.errors : []") or []
        self.c.ok("browser: no JavaScript errors or failed requests in the console", not errors, "; ".join(errors)[:1500])

    # -- main ----------------------------------------------------------------------------------

    def run(self):
        t0 = time.monotonic()
        try:
            self.prepare_runs()
            self.start_server()
        except Exception as e:  # noqa: BLE001
            self.c.fail("setup: small run, live run and vzero serve", str(e)[:2000])
            return
        self.section("HTTP bad input", self.http_checks)
        try:
            self.start_browser()
        except Exception as e:  # noqa: BLE001
            self.c.fail("setup: headless chromium", f"{type(e).__name__}: {e}"[:2000])
            return
        self.section("Run page (a run being written)", self.run_page)
        self.section("Openings page", self.openings_page)
        self.section("Analyse page", self.analyse_page)
        self.section("spqr game with a Dictator double move", self.play_spqr)
        self.section("shogun game with a drop and a promotion", self.play_shogun)
        self.section("empire game", self.play_empire)
        self.section("Run page again (screenshot)", self.run_page_later)
        self.section("browser console", self.console_errors)
        # The latency, once the live run has stopped (it trains for one minute).
        try:
            self.live_proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            pass
        self.section("move latency", self.measure_latency)
        print(f"browser_test: {time.monotonic() - t0:.0f} s in all", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vzero", default=str(ROOT / "target" / "release" / "vzero"))
    ap.add_argument("--out", default=os.environ.get("OUT_DIR") or str(ROOT / "target" / "browser-test"))
    ap.add_argument("--chromium", default=os.environ.get("VZERO_CHROMIUM", "/usr/bin/chromium"))
    ap.add_argument("--chromedriver", default=os.environ.get("VZERO_CHROMEDRIVER", "/usr/bin/chromedriver"))
    ap.add_argument("--keep", action="store_true", help="keep the temporary run directories")
    args = ap.parse_args()
    if not os.access(args.vzero, os.X_OK):
        print(f"browser_test: {args.vzero} is not there: build it first (cargo build --release -p vzero --bin vzero)", file=sys.stderr)
        sys.exit(2)
    try:
        import selenium  # noqa: F401
    except ImportError:
        print("browser_test: selenium is not installed in this Python: run scripts/setup.sh --browser and use .venv/bin/python", file=sys.stderr)
        sys.exit(2)
    t = BrowserTest(args)
    try:
        t.run()
    finally:
        t.cleanup()
    for p in t.screenshots:
        print(f"browser_test: screenshot {p}")
    if t.latency:
        print(f"browser_test: move latency: {t.latency}")
    if t.c.failed:
        print("browser_test: FAILED: " + "; ".join(t.c.failed))
    print(f"browser_test: {t.c.passed} passed, {len(t.c.failed)} failed")
    sys.exit(1 if t.c.failed else 0)


if __name__ == "__main__":
    main()
