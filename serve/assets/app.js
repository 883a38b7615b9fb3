// vzero serve: the browser side. Plain ES2020, no framework, nothing fetched from elsewhere.
//
// The page only draws what the server says: legal moves, check, results and SAN all come from
// the API. The small FEN reader below is for display only (the Openings and Analyse boards).
'use strict';

(() => {
  // ------------------------------------------------------------------ small helpers
  const SVGNS = 'http://www.w3.org/2000/svg';
  const $ = (id) => document.getElementById(id);
  const enc = encodeURIComponent;

  /** An HTML element with attributes (`class`, `text`, `dataset`, others) and children. */
  function h(tag, attrs, ...children) {
    const e = document.createElement(tag);
    setAttrs(e, attrs);
    for (const c of children) if (c != null) e.append(c);
    return e;
  }

  /** An SVG element, appended to `parent` when given. */
  function s(tag, attrs, parent) {
    const e = document.createElementNS(SVGNS, tag);
    setAttrs(e, attrs);
    if (parent) parent.appendChild(e);
    return e;
  }

  function setAttrs(e, attrs) {
    if (!attrs) return;
    for (const [k, v] of Object.entries(attrs)) {
      if (v == null || v === false) continue;
      if (k === 'text') e.textContent = v;
      else if (k === 'dataset') Object.assign(e.dataset, v);
      else e.setAttribute(k, v === true ? '' : String(v));
    }
  }

  function clear(e) {
    while (e.firstChild) e.removeChild(e.firstChild);
  }

  const fileLetter = (f) => String.fromCharCode(97 + f);
  const sqName = (f, r) => fileLetter(f) + (r + 1);
  /** [file, rank] (0-based) of a square name like "e4" or "l12"; null if garbled. */
  function sqCoords(name) {
    const m = /^([a-z])(\d{1,2})$/.exec(name || '');
    if (!m) return null;
    return [m[1].charCodeAt(0) - 97, parseInt(m[2], 10) - 1];
  }

  /** from/to of a UCI move, for display only (last-move marks, arrows). */
  function uciSquares(uci) {
    if (!uci) return null;
    let m = /^[A-Za-z]@([a-z]\d{1,2})/.exec(uci);
    if (m) return { from: null, to: m[1] };
    m = /^([a-z]\d{1,2})([a-z]\d{1,2})/.exec(uci);
    if (m) return { from: m[1], to: m[2] };
    return null;
  }

  function fmtInt(v) {
    return v == null || Number.isNaN(v) ? '–' : String(Math.round(v));
  }

  function fmtNum(v, digits) {
    if (v == null || typeof v !== 'number' || !Number.isFinite(v)) return '–';
    return v.toFixed(digits);
  }

  function fmtAge(sec) {
    if (sec == null || !Number.isFinite(sec)) return '';
    sec = Math.max(0, Math.round(sec));
    if (sec < 90) return sec + ' s';
    if (sec < 5400) return Math.round(sec / 60) + ' min';
    if (sec < 172800) return (sec / 3600).toFixed(1) + ' h';
    return (sec / 86400).toFixed(1) + ' d';
  }

  /** "cp 35" -> "+0.35", "mate -3" -> "#-3"; anything else as given. */
  function prettyScore(txt) {
    if (!txt) return '';
    let m = /^cp\s+(-?\d+)$/.exec(txt);
    if (m) {
      const v = parseInt(m[1], 10) / 100;
      return (v > 0 ? '+' : '') + v.toFixed(2);
    }
    m = /^mate\s+(-?\d+)$/.exec(txt);
    if (m) return '#' + m[1];
    return txt;
  }

  // ------------------------------------------------------------------ busy flag and errors
  // document.body.dataset.busy is "1" while any request (or a bot's move, or a running
  // analysis) is under way and "0" when the page is idle: the browser tests wait on it.
  let busyCount = 0;
  function renderBusy() {
    document.body.dataset.busy = busyCount > 0 ? '1' : '0';
  }
  function busyUp() {
    busyCount++;
    renderBusy();
  }
  function busyDown() {
    busyCount = Math.max(0, busyCount - 1);
    renderBusy();
  }
  async function withBusy(fn) {
    busyUp();
    try {
      return await fn();
    } finally {
      busyDown();
    }
  }

  class ApiError extends Error {
    constructor(message, status) {
      super(message);
      this.status = status || 0;
      this.shown = false;
    }
  }

  function showError(msg) {
    const e = $('error');
    e.textContent = msg;
    if (e.hidden) {
      e.hidden = false;
      requestAnimationFrame(fitVisibleBoards);
    }
  }
  function clearError() {
    const e = $('error');
    if (e.hidden) return;
    e.textContent = '';
    e.hidden = true;
    requestAnimationFrame(fitVisibleBoards);
  }

  /** The message of a failed response: the server's {"error": ...}, else the status. */
  function errorText(res, raw) {
    try {
      const j = JSON.parse(raw);
      if (j && typeof j.error === 'string') return j.error;
    } catch (_) {
      /* not JSON */
    }
    const body = (raw || '').trim();
    return `${res.status} ${res.statusText || 'error'}` + (body ? ': ' + body.slice(0, 300) : '');
  }

  /** One API request: JSON in and out (or text with {text: true}); shows and throws errors. */
  async function api(method, path, body, opts) {
    const text = opts && opts.text;
    return withBusy(async () => {
      let res;
      let raw;
      try {
        const init = { method, headers: {} };
        if (body !== undefined) {
          init.headers['Content-Type'] = 'application/json';
          init.body = JSON.stringify(body);
        }
        res = await fetch(path, init);
        raw = await res.text();
      } catch (err) {
        const e = new ApiError(`cannot reach the server (${err && err.message ? err.message : err})`);
        showError(e.message);
        e.shown = true;
        throw e;
      }
      if (!res.ok) {
        const e = new ApiError(errorText(res, raw), res.status);
        showError(e.message);
        e.shown = true;
        throw e;
      }
      clearError();
      if (text) return raw;
      try {
        return JSON.parse(raw);
      } catch (_) {
        const e = new ApiError(`${method} ${path}: the server's answer is not JSON`);
        showError(e.message);
        e.shown = true;
        throw e;
      }
    });
  }

  /** Runs an event handler's work; any error not shown yet is shown. */
  function act(fn) {
    const report = (err) => {
      if (!(err instanceof ApiError && err.shown)) showError(String((err && err.message) || err));
      if (!(err instanceof ApiError)) console.error(err);
    };
    // called at once (not in a later microtask): the busy flag is up before the handler returns
    return (...args) => {
      try {
        Promise.resolve(fn(...args)).catch(report);
      } catch (err) {
        report(err);
      }
    };
  }

  /**
   * When an EventSource fails at once (an error answer cannot be read through it), asks the same
   * URL with fetch to show the server's message; a stream that does start is cancelled at once.
   */
  function explainStreamFailure(url, fallback) {
    return withBusy(() => explainStream(url, fallback));
  }
  async function explainStream(url, fallback) {
    const ctl = new AbortController();
    try {
      const res = await fetch(url, { signal: ctl.signal });
      if (!res.ok) {
        showError(errorText(res, await res.text()));
        return;
      }
      ctl.abort();
      showError(fallback);
    } catch (_) {
      showError(fallback);
    }
  }

  // ------------------------------------------------------------------ board drawing
  const SQ = 100; // one square in SVG units
  const PAD = 4;
  /** Room for the coordinates (left and bottom): more for two-digit rank numbers. */
  const marginOf = (ranks) => (ranks >= 10 ? 42 : 34);

  /** Draws a piece (circle + letter) centred at 0,0 of `g`; `size` is the square size. */
  function drawPiece(g, piece, color, promoted) {
    const white = color === 'w';
    s('circle', { class: 'piece-disc', r: 41, cx: 0, cy: 0, fill: white ? '#fbfaf5' : '#2a2a2a', stroke: white ? '#3a3a3a' : '#111', 'stroke-width': 3 }, g);
    const letterFill = promoted ? (white ? '#c0392b' : '#ff7b6b') : white ? '#222' : '#f4f4f4';
    s('text', { class: 'piece-letter', x: 0, y: 2, 'text-anchor': 'middle', 'dominant-baseline': 'central', 'font-size': 50, 'font-weight': 700, fill: letterFill, text: piece }, g);
    if (promoted) {
      s('text', { class: 'piece-plus', x: 25, y: -20, 'text-anchor': 'middle', 'dominant-baseline': 'central', 'font-size': 34, 'font-weight': 700, fill: letterFill, text: '+' }, g);
    }
  }

  /** A small standalone SVG of one piece (pockets, drag ghost). */
  function pieceIcon(piece, color, promoted) {
    const svg = s('svg', { viewBox: '-50 -50 100 100', class: 'piece-icon', 'aria-hidden': 'true' });
    drawPiece(svg, piece, color, promoted);
    return svg;
  }

  /**
   * Draws a board into `svg`. o = { files, ranks, flipped, pieces: [{sq, piece, color, promoted}],
   * lastMove: {from, to}, checkSq, pendingSq, selected, targets: [{sq, capture}], arrow: {from, to} }.
   */
  function drawBoard(svg, o) {
    clear(svg);
    const files = o.files;
    const ranks = o.ranks;
    const MARGIN = marginOf(ranks);
    const W = MARGIN + files * SQ + PAD;
    const H = PAD + ranks * SQ + MARGIN;
    svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    svg._layout = { files, ranks, flipped: !!o.flipped, W, H, margin: MARGIN };
    const id = svg.id || 'b';

    const defs = s('defs', null, svg);
    const dot = s('radialGradient', { id: `${id}-dot`, cx: '50%', cy: '50%', r: '50%' }, defs);
    s('stop', { offset: '0', 'stop-color': '#1d5c2e', 'stop-opacity': 0.55 }, dot);
    s('stop', { offset: '0.3', 'stop-color': '#1d5c2e', 'stop-opacity': 0.55 }, dot);
    s('stop', { offset: '0.31', 'stop-color': '#1d5c2e', 'stop-opacity': 0 }, dot);
    s('stop', { offset: '1', 'stop-color': '#1d5c2e', 'stop-opacity': 0 }, dot);
    const ring = s('radialGradient', { id: `${id}-ring`, cx: '50%', cy: '50%', r: '50%' }, defs);
    s('stop', { offset: '0', 'stop-color': '#1d5c2e', 'stop-opacity': 0 }, ring);
    s('stop', { offset: '0.84', 'stop-color': '#1d5c2e', 'stop-opacity': 0 }, ring);
    s('stop', { offset: '0.85', 'stop-color': '#1d5c2e', 'stop-opacity': 0.5 }, ring);
    s('stop', { offset: '1', 'stop-color': '#1d5c2e', 'stop-opacity': 0.5 }, ring);
    const chk = s('radialGradient', { id: `${id}-check`, cx: '50%', cy: '50%', r: '50%' }, defs);
    s('stop', { offset: '0', 'stop-color': '#ff1a1a', 'stop-opacity': 1 }, chk);
    s('stop', { offset: '0.7', 'stop-color': '#e01010', 'stop-opacity': 0.95 }, chk);
    s('stop', { offset: '1', 'stop-color': '#b00000', 'stop-opacity': 0.3 }, chk);
    const mk = s('marker', { id: `${id}-arrowhead`, viewBox: '0 0 10 10', refX: 5, refY: 5, markerWidth: 3.2, markerHeight: 3.2, orient: 'auto-start-reverse' }, defs);
    s('path', { d: 'M 0 0 L 10 5 L 0 10 z', fill: '#1f6fd1' }, mk);

    const pos = (sq) => {
      const c = sqCoords(sq);
      if (!c || c[0] >= files || c[1] >= ranks) return null;
      const col = o.flipped ? files - 1 - c[0] : c[0];
      const row = o.flipped ? c[1] : ranks - 1 - c[1];
      return { x: MARGIN + col * SQ, y: PAD + row * SQ };
    };

    const last = o.lastMove || {};
    const lastSet = new Set([last.from, last.to].filter(Boolean));

    // squares
    const gSq = s('g', { class: 'squares' }, svg);
    for (let r = 0; r < ranks; r++) {
      for (let f = 0; f < files; f++) {
        const name = sqName(f, r);
        const p = pos(name);
        const cls = ['square', (f + r) % 2 === 1 ? 'light' : 'dark'];
        if (lastSet.has(name)) cls.push('lastmove');
        if (o.selected === name) cls.push('selected');
        if (o.checkSq === name) cls.push('check');
        if (o.pendingSq === name) cls.push('pending');
        s('rect', { class: cls.join(' '), x: p.x, y: p.y, width: SQ, height: SQ, 'data-sq': name }, gSq);
      }
    }

    // coordinates
    const gCo = s('g', { class: 'coords' }, svg);
    for (let r = 0; r < ranks; r++) {
      const p = pos(sqName(0, r));
      s('text', { x: MARGIN / 2, y: p.y + SQ / 2, 'text-anchor': 'middle', 'dominant-baseline': 'central', text: String(r + 1) }, gCo);
    }
    for (let f = 0; f < files; f++) {
      const p = pos(sqName(f, 0));
      s('text', { x: p.x + SQ / 2, y: PAD + ranks * SQ + MARGIN / 2 + 2, 'text-anchor': 'middle', 'dominant-baseline': 'central', text: fileLetter(f) }, gCo);
    }

    // check glow under the royal piece
    if (o.checkSq) {
      const p = pos(o.checkSq);
      if (p) s('rect', { class: 'check-glow', x: p.x, y: p.y, width: SQ, height: SQ, fill: `url(#${id}-check)` }, svg);
    }

    // pieces
    const gP = s('g', { class: 'pieces' }, svg);
    for (const pc of o.pieces || []) {
      const p = pos(pc.sq);
      if (!p) continue;
      const g = s('g', {
        class: 'piece' + (o.movable && o.movable.has(pc.sq) ? ' movable' : ''),
        transform: `translate(${p.x + SQ / 2} ${p.y + SQ / 2})`,
        'data-sq': pc.sq,
        'data-piece': pc.piece,
        'data-color': pc.color,
        'data-promoted': pc.promoted ? 'true' : 'false',
      }, gP);
      drawPiece(g, pc.piece, pc.color, pc.promoted);
    }

    // legal destinations: whole-square markers (a dot, or corners for a capture)
    if (o.targets && o.targets.length) {
      const gT = s('g', { class: 'targets' }, svg);
      for (const t of o.targets) {
        const p = pos(t.sq);
        if (!p) continue;
        s('rect', { class: 'target' + (t.capture ? ' capture' : ''), x: p.x, y: p.y, width: SQ, height: SQ, fill: `url(#${id}-${t.capture ? 'ring' : 'dot'})`, 'data-sq': t.sq }, gT);
      }
    }

    // an arrow (the analysis' best move)
    if (o.arrow && o.arrow.to) {
      const b = pos(o.arrow.to);
      const a = o.arrow.from ? pos(o.arrow.from) : null;
      if (a && b) {
        const x1 = a.x + SQ / 2, y1 = a.y + SQ / 2, x2 = b.x + SQ / 2, y2 = b.y + SQ / 2;
        const len = Math.hypot(x2 - x1, y2 - y1) || 1;
        const k = (len - 28) / len;
        s('line', { class: 'arrow', x1, y1, x2: x1 + (x2 - x1) * k, y2: y1 + (y2 - y1) * k, stroke: '#1f6fd1', 'stroke-width': 14, 'stroke-linecap': 'round', 'marker-end': `url(#${id}-arrowhead)`, opacity: 0.7 }, svg);
      } else if (b) {
        s('circle', { class: 'arrow', cx: b.x + SQ / 2, cy: b.y + SQ / 2, r: 44, fill: 'none', stroke: '#1f6fd1', 'stroke-width': 8, opacity: 0.7 }, svg);
      }
    }
  }

  /** The square under a screen point of a drawn board, or null. */
  function squareAtPoint(svg, clientX, clientY) {
    const L = svg._layout;
    if (!L) return null;
    const ctm = svg.getScreenCTM();
    if (!ctm) return null;
    const pt = svg.createSVGPoint();
    pt.x = clientX;
    pt.y = clientY;
    const p = pt.matrixTransform(ctm.inverse());
    const col = Math.floor((p.x - L.margin) / SQ);
    const row = Math.floor((p.y - PAD) / SQ);
    if (col < 0 || row < 0 || col >= L.files || row >= L.ranks) return null;
    const f = L.flipped ? L.files - 1 - col : col;
    const r = L.flipped ? row : L.ranks - 1 - row;
    return sqName(f, r);
  }

  /** Fits a board's SVG to its column and the window's height. */
  function fitBoard(svg) {
    if (!svg || !svg._layout) return;
    const page = svg.closest('.page');
    if (page && page.hidden) return;
    const wrap = svg.parentElement;
    const centre = wrap.closest('.centre') || wrap.parentElement;
    const ratio = svg._layout.H / svg._layout.W;
    const availW = Math.max(120, centre.clientWidth - 4);
    let below = 0;
    let el = wrap.nextElementSibling;
    while (el) {
      below += el.offsetHeight + 6;
      el = el.nextElementSibling;
    }
    const top = wrap.getBoundingClientRect().top + window.scrollY;
    const availH = Math.max(160, window.innerHeight - top - below - 18);
    const w = Math.floor(Math.min(availW, availH / ratio));
    svg.style.width = w + 'px';
    svg.style.height = Math.floor(w * ratio) + 'px';
  }

  function fitVisibleBoards() {
    for (const id of ['board', 'an-board', 'op-board']) {
      const svg = $(id);
      if (svg && !svg.closest('.page').hidden) fitBoard(svg);
    }
  }

  /** Fills a pocket element with a hand: [{piece, count}]. */
  function drawPocket(div, color, hand, o) {
    clear(div);
    for (const item of hand || []) {
      if (!item || !(item.count > 0)) continue;
      const piece = String(item.piece).toUpperCase();
      const cls = ['pocket-piece'];
      if (o && o.selected === piece) cls.push('selected');
      if (o && o.movable && o.movable.has(piece)) cls.push('movable');
      const e = h('div', { class: cls.join(' '), dataset: { piece, color, count: String(item.count) }, title: `${color === 'w' ? 'White' : 'Black'} ${piece} ×${item.count}` });
      e.append(pieceIcon(piece, color, false), h('span', { class: 'count', text: '×' + item.count }));
      div.append(e);
    }
    if (!div.firstChild) div.append(h('span', { class: 'pocket-empty', text: 'empty' }));
  }

  // ------------------------------------------------------------------ display-only FEN reader
  /**
   * Reads a FEN's board for drawing: letters, '+' before a promoted piece (a '~' after one
   * too), numbers (1..16, several digits) for empty squares, and a `[...]` hand section.
   * Knows nothing of the rules.
   */
  function parseFen(fen) {
    const fields = String(fen || '').trim().split(/\s+/);
    let boardPart = fields[0] || '';
    let handPart = null;
    const hm = /\[([^\]]*)\]/.exec(boardPart);
    if (hm) {
      handPart = hm[1];
      boardPart = boardPart.replace(hm[0], '');
    }
    const rows = boardPart.split('/');
    const ranks = rows.length;
    const pieces = [];
    let files = 0;
    rows.forEach((row, i) => {
      const r = ranks - 1 - i;
      let f = 0;
      let promoted = false;
      for (let j = 0; j < row.length; j++) {
        const c = row[j];
        if (c >= '0' && c <= '9') {
          let k = j;
          while (k + 1 < row.length && row[k + 1] >= '0' && row[k + 1] <= '9') k++;
          f += parseInt(row.slice(j, k + 1), 10);
          j = k;
        } else if (c === '+') {
          promoted = true;
        } else if (c === '~') {
          if (pieces.length) pieces[pieces.length - 1].promoted = true;
        } else if (/[A-Za-z]/.test(c)) {
          pieces.push({ sq: sqName(f, r), piece: c.toUpperCase(), color: c === c.toUpperCase() ? 'w' : 'b', promoted });
          promoted = false;
          f++;
        } else {
          throw new Error(`FEN: unexpected '${c}'`);
        }
      }
      files = Math.max(files, f);
    });
    if (ranks < 1 || files < 1 || files > 26 || ranks > 99) throw new Error('FEN: not a board');
    const hands = { w: [], b: [] };
    if (handPart) {
      const counts = { w: new Map(), b: new Map() };
      let n = '';
      for (const c of handPart) {
        if (c >= '0' && c <= '9') {
          n += c;
          continue;
        }
        if (!/[A-Za-z]/.test(c)) continue;
        const col = c === c.toUpperCase() ? 'w' : 'b';
        const k = c.toUpperCase();
        counts[col].set(k, (counts[col].get(k) || 0) + (n ? parseInt(n, 10) : 1));
        n = '';
      }
      for (const col of ['w', 'b']) for (const [piece, count] of counts[col]) hands[col].push({ piece, count });
    }
    return { files, ranks, pieces, hands, hasHands: handPart !== null, side: fields[1] === 'b' ? 'b' : 'w' };
  }

  // ------------------------------------------------------------------ W/D/L bars
  /** A three-part bar; parts = [{value, cls, label}] (values in any unit). */
  function wdlBar(container, parts, title, noText) {
    clear(container);
    container.classList.add('wdl');
    const total = parts.reduce((a, p) => a + (p.value > 0 ? p.value : 0), 0);
    if (title) container.title = title;
    if (!(total > 0)) {
      container.append(h('span', { class: 'wdl-empty', text: '–' }));
      return;
    }
    for (const p of parts) {
      const pct = (100 * Math.max(0, p.value)) / total;
      const seg = h('span', { class: 'wdl-seg ' + p.cls, style: `width:${pct}%`, title: `${p.label} ${pct.toFixed(1)}%` });
      if (pct >= 12 && !noText) seg.textContent = Math.round(pct) + '%';
      container.append(seg);
    }
  }

  // ------------------------------------------------------------------ app state
  const app = {
    info: null,
    page: 'play',
  };

  const play = {
    state: null,
    flipped: false,
    sel: null, // {kind: 'sq', sq} | {kind: 'drop', piece}
    selOnDown: false,
    token: 0, // bumps when the game is replaced: late answers for an old game are dropped
    busy: 0, // game requests under way (moves are not offered meanwhile)
    botLoop: false,
    drag: null,
    started: false,
  };

  // ------------------------------------------------------------------ tabs and routing
  const PAGES = ['play', 'analyse', 'openings', 'run'];

  function pageOfPath(path) {
    const p = (path || '/').replace(/\/+$/, '') || '/';
    if (p === '/analyse') return 'analyse';
    if (p === '/openings') return 'openings';
    if (p === '/run') return 'run';
    return 'play';
  }

  function pathOfPage(page) {
    if (page === 'play') return play.state ? `/?game=${enc(play.state.id)}` : '/';
    return '/' + page;
  }

  function showPage(page, push) {
    app.page = page;
    for (const p of PAGES) {
      $('page-' + p).hidden = p !== page;
      const tab = $('tab-' + p);
      tab.classList.toggle('active', p === page);
      if (p === page) tab.setAttribute('aria-current', 'page');
      else tab.removeAttribute('aria-current');
    }
    if (push) history.pushState({ page }, '', pathOfPage(page));
    document.title = `vzero · ${page[0].toUpperCase() + page.slice(1)}`;
    if (page !== 'run') runDisconnect();
    if (page !== 'analyse' && an.es) anClose('Stopped (left the page).');
    requestAnimationFrame(fitVisibleBoards);
    return enterPage(page);
  }

  async function enterPage(page) {
    if (!app.info) return;
    if (page === 'play') {
      if (!play.state && !play.started) await startFirstGame();
      else renderPlay();
    } else if (page === 'analyse') {
      drawAnalyseBoard();
    } else if (page === 'openings') {
      if (!op.loaded) await opLoad();
      else opRender();
    } else if (page === 'run') {
      await runConnect();
    }
  }

  // ------------------------------------------------------------------ info and selects
  function botsFor(variant) {
    return (app.info.bots || []).filter((b) => {
      if (b.variant && b.variant !== variant) return false;
      if (Array.isArray(b.variants) && !b.variants.includes(variant)) return false;
      return true;
    });
  }

  function fillSelect(sel, items, keep) {
    const old = keep !== undefined ? keep : sel.value;
    clear(sel);
    for (const it of items) sel.append(h('option', { value: it.value, text: it.label }));
    if (items.some((it) => it.value === old)) sel.value = old;
    return sel.value;
  }

  function fillPlayerSelects(keepWhite, keepBlack) {
    const v = $('variant').value;
    const items = botsFor(v).map((b) => ({ value: b.spec, label: b.label || b.spec }));
    const specs = items.map((i) => i.value);
    const defWhite = specs.includes('human') ? 'human' : specs[0];
    const defBlack = specs.includes('alphabeta:1') ? 'alphabeta:1' : specs.find((x) => x !== 'human') || specs[0];
    fillSelect($('white'), items, specs.includes(keepWhite) ? keepWhite : defWhite);
    fillSelect($('black'), items, specs.includes(keepBlack) ? keepBlack : defBlack);
  }

  function botLabel(spec) {
    const b = (app.info && app.info.bots || []).find((x) => x.spec === spec);
    return b ? b.label || spec : spec;
  }

  function fillInfo(info) {
    app.info = info;
    $('version').textContent = info.version ? 'v' + info.version : '';
    const variants = (info.variants || []).map((v) => ({ value: v.name, label: `${v.name} (${v.files}×${v.ranks})` }));
    fillSelect($('variant'), variants);
    fillPlayerSelects();
    fillSelect($('an-variant'), variants);
    fillAnalyseModels();
    const runs = (info.runs || []).map((r) => ({ value: String(r.id), label: `${r.name}${r.variant ? ' (' + r.variant + ')' : ''}` }));
    fillSelect($('op-run'), runs);
    fillSelect($('run-select'), runs);
    if (!runs.length) {
      for (const id of ['op-run', 'run-select']) {
        $(id).append(h('option', { value: '', text: 'no run (start with --run DIR)' }));
        $(id).disabled = true;
      }
    }
  }

  function variantInfo(name) {
    return (app.info && app.info.variants || []).find((v) => v.name === name);
  }

  // ------------------------------------------------------------------ Play: game state
  function humanToMove() {
    const st = play.state;
    return !!st && !st.result && !st.to_move_is_bot && play.busy === 0;
  }

  function boardMoves(sq) {
    return play.state.legal.filter((m) => m.from === sq && !m.drop && !m.pass);
  }

  function dropMoves(piece) {
    return play.state.legal.filter((m) => m.drop && String(m.drop).toUpperCase() === piece && !m.pass);
  }

  function selMoves() {
    const sel = play.sel;
    if (!sel || !play.state) return [];
    return sel.kind === 'sq' ? boardMoves(sel.sq) : dropMoves(sel.piece);
  }

  function setSel(sel) {
    play.sel = sel;
    renderBoard();
  }

  function clearSel() {
    if (play.sel) {
      play.sel = null;
      play.selOnDown = false;
      renderBoard();
    }
  }

  function pieceAt(sq) {
    return play.state && play.state.board.find((p) => p.sq === sq);
  }

  /** The square of the side to move's royal piece ('K'), when in check. */
  function checkSquare(st) {
    if (!st || !st.check) return null;
    const k = st.board.find((p) => p.piece === 'K' && p.color === st.side_to_move);
    return k ? k.sq : null;
  }

  function renderBoard() {
    const st = play.state;
    const svg = $('board');
    if (!st) return;
    const can = humanToMove();
    const movable = new Set();
    const dropMovable = new Set();
    if (can) {
      for (const m of st.legal) {
        if (m.pass) continue;
        if (m.drop) dropMovable.add(String(m.drop).toUpperCase());
        else if (m.from) movable.add(m.from);
      }
    }
    let targets = [];
    if (can && play.sel) {
      const seen = new Set();
      for (const m of selMoves()) {
        if (!m.to || seen.has(m.to)) continue;
        seen.add(m.to);
        targets.push({ sq: m.to, capture: !!pieceAt(m.to) });
      }
    }
    const firstDraw = !svg._layout || svg._layout.files !== st.files || svg._layout.ranks !== st.ranks;
    drawBoard(svg, {
      files: st.files,
      ranks: st.ranks,
      flipped: play.flipped,
      pieces: st.board,
      lastMove: st.last_move,
      checkSq: checkSquare(st),
      pendingSq: st.pending_second_step,
      selected: can && play.sel && play.sel.kind === 'sq' ? play.sel.sq : null,
      targets,
      movable,
    });
    // pockets: the opponent's on top unless flipped
    const top = $('pocket-top-slot');
    const bottom = $('pocket-bottom-slot');
    const pw = $('pocket-w');
    const pb = $('pocket-b');
    if (play.flipped) {
      if (pw.parentElement !== top) top.append(pw);
      if (pb.parentElement !== bottom) bottom.append(pb);
    } else {
      if (pb.parentElement !== top) top.append(pb);
      if (pw.parentElement !== bottom) bottom.append(pw);
    }
    const drops = !!st.has_drops;
    pw.hidden = !drops;
    pb.hidden = !drops;
    top.classList.toggle('used', drops);
    bottom.classList.toggle('used', drops);
    if (drops) {
      const selPiece = can && play.sel && play.sel.kind === 'drop' ? play.sel.piece : null;
      const stm = st.side_to_move;
      drawPocket(pw, 'w', st.hands && st.hands.w, { selected: stm === 'w' ? selPiece : null, movable: stm === 'w' ? dropMovable : null });
      drawPocket(pb, 'b', st.hands && st.hands.b, { selected: stm === 'b' ? selPiece : null, movable: stm === 'b' ? dropMovable : null });
    }
    if (firstDraw) requestAnimationFrame(fitVisibleBoards);
  }

  function resultText(r) {
    if (!r) return '';
    return r.reason ? `${r.result} (${r.reason})` : r.result;
  }

  function renderStatus() {
    const st = play.state;
    const status = $('status');
    const result = $('result');
    if (!st) {
      status.textContent = 'No game yet.';
      result.textContent = '';
      result.removeAttribute('data-result');
      return;
    }
    if (st.result) {
      const r = st.result;
      const who = r.winner === 'w' ? 'White wins' : r.winner === 'b' ? 'Black wins' : 'Draw';
      status.textContent = `Game over: ${who}${r.reason ? ' by ' + r.reason : ''}.`;
      result.textContent = resultText(r);
      result.dataset.result = r.result;
      result.className = 'result over';
    } else {
      const side = st.side_to_move === 'w' ? 'White' : 'Black';
      const spec = st.side_to_move === 'w' ? st.white : st.black;
      let t = st.pending_second_step
        ? `${side}: the Dictator's second step (the king came from ${st.pending_second_step}): move the king again or pass`
        : `${side} to move`;
      if (st.check) t += ', in check';
      if (st.to_move_is_bot) t += play.botLoop ? ` · ${botLabel(spec)} is thinking…` : ` · ${botLabel(spec)} to play`;
      else t += ` · ${spec === 'human' ? 'your move' : botLabel(spec)}`;
      status.textContent = t;
      result.textContent = '';
      result.removeAttribute('data-result');
      result.className = 'result';
    }
    status.classList.toggle('check', !!st.check && !st.result);
  }

  function renderMoves() {
    const st = play.state;
    const ol = $('moves');
    clear(ol);
    if (!st) return;
    const startFields = String(st.start_fen || '').trim().split(/\s+/);
    let num = parseInt(startFields[5], 10);
    if (!(num > 0)) num = 1;
    let prev = null;
    st.moves.forEach((m, i) => {
      if (m.color === 'w' && prev === 'b') num++;
      const li = h('li', { class: `move ${m.color === 'b' ? 'b' : 'w'}`, dataset: { uci: m.uci, ply: String(i + 1) }, text: m.san });
      if (m.color === 'w' && prev !== 'w') li.dataset.num = num + '.';
      else if (m.color === 'b' && prev !== 'w' && prev !== 'b') li.dataset.num = num + '…';
      if (m.color === 'b' && prev === 'b') li.classList.add('again');
      if (m.color === 'w' && prev === 'w') li.classList.add('again');
      if (i === st.moves.length - 1) li.classList.add('current');
      ol.append(li);
      prev = m.color;
    });
    ol.scrollTop = ol.scrollHeight;
  }

  function renderControls() {
    const st = play.state;
    const can = humanToMove();
    const passMove = st && !st.result && st.legal.find((m) => m.pass);
    $('pass').hidden = !(passMove && !st.to_move_is_bot);
    $('pass').disabled = !can;
    $('takeback').disabled = !st || !st.moves.length || play.busy > 0;
    $('bot-move').hidden = !(st && st.to_move_is_bot && !st.result && play.busy === 0);
    $('analyse-here').disabled = !st;
    $('cur-fen').value = st ? st.fen : '';
    $('game-id').textContent = st ? `Game ${st.id}: ${st.variant}, ${botLabel(st.white)} – ${botLabel(st.black)}` : '';
  }

  function renderPlay() {
    renderBoard();
    renderStatus();
    renderMoves();
    renderControls();
  }

  function setState(st) {
    const sameGame = play.state && play.state.id === st.id;
    const oldPly = play.state ? play.state.moves.length : -1;
    play.state = st;
    if (!sameGame || st.moves.length !== oldPly || !humanToMove()) {
      play.sel = null;
      play.selOnDown = false;
    }
    hidePromo();
    renderPlay();
    if (app.page === 'play') {
      const want = `/?game=${enc(st.id)}`;
      if (location.pathname + location.search !== want) history.replaceState({ page: 'play' }, '', want);
    }
  }

  async function refreshPgn(token) {
    const st = play.state;
    if (!st) return;
    const txt = await api('GET', `/api/games/${enc(st.id)}/pgn`, undefined, { text: true });
    if (token !== play.token) return;
    $('pgn').textContent = txt;
    const a = $('pgn-download');
    a.href = 'data:application/x-chess-pgn;charset=utf-8,' + encodeURIComponent(txt);
    a.download = `vzero-${st.variant}-${st.id}.pgn`;
  }

  /** After a new state: the PGN, then the bots' moves while a bot is to move. */
  async function followUp(token) {
    await refreshPgn(token);
    if (token !== play.token) return;
    play.botLoop = true;
    try {
      while (token === play.token && play.state && play.state.to_move_is_bot && !play.state.result) {
        renderStatus();
        const id = play.state.id;
        let st;
        if (play.state.thinking) {
          // a bot's search started elsewhere (another tab, or before a reload): wait for it
          await new Promise((r) => setTimeout(r, 700));
          if (token !== play.token) return;
          st = await api('GET', `/api/games/${enc(id)}`);
        } else {
          st = await api('POST', `/api/games/${enc(id)}/bot`);
        }
        if (token !== play.token) return;
        setState(st);
        await refreshPgn(token);
      }
    } finally {
      if (token === play.token) play.botLoop = false;
    }
  }

  /** One game request (and what follows it) with moves held back meanwhile. */
  async function gameRequest(fn, newToken) {
    if (newToken) play.token++;
    const token = play.token;
    play.busy++;
    busyUp();
    renderControls();
    try {
      const st = await fn();
      if (token !== play.token) return;
      setState(st);
      await followUp(token);
    } finally {
      play.busy--;
      busyDown();
      if (token === play.token) {
        play.botLoop = false;
        renderPlay();
      }
    }
  }

  async function newGame() {
    const body = {
      variant: $('variant').value,
      fen: $('fen').value.trim() || null,
      white: $('white').value,
      black: $('black').value,
    };
    play.started = true;
    await gameRequest(() => api('POST', '/api/games', body), true);
  }

  async function startFirstGame() {
    play.started = true;
    const q = new URLSearchParams(location.search).get('game');
    if (q) {
      try {
        await gameRequest(() => api('GET', `/api/games/${enc(q)}`), true);
        const st = play.state;
        if (st) {
          $('variant').value = st.variant;
          fillPlayerSelects(st.white, st.black);
        }
        return;
      } catch (_) {
        /* an old link: the error shows, and a new game follows */
      }
    }
    await newGame();
  }

  async function playMove(uci) {
    if (!play.state || play.busy > 0) return;
    const id = play.state.id;
    play.sel = null;
    hidePromo();
    await gameRequest(() => api('POST', `/api/games/${enc(id)}/move`, { uci }), false);
  }

  async function takeBack() {
    if (!play.state) return;
    const id = play.state.id;
    await gameRequest(() => api('POST', `/api/games/${enc(id)}/undo`), true);
  }

  async function botMove() {
    if (!play.state || play.busy > 0) return;
    const token = play.token;
    play.busy++;
    busyUp();
    try {
      await followUp(token);
    } finally {
      play.busy--;
      busyDown();
      if (token === play.token) renderPlay();
    }
  }

  // ------------------------------------------------------------------ Play: choosing moves
  /** Plays one of the moves `cands` (same from/to): at once, or through the choice dialog. */
  function chooseAndPlay(cands) {
    if (!cands.length) return;
    if (cands.length === 1) {
      act(playMove)(cands[0].uci);
      return;
    }
    showPromo(cands);
  }

  function showPromo(cands) {
    const box = $('promo-choices');
    clear(box);
    for (const m of cands) {
      const b = h('button', { type: 'button', class: 'promo-choice', dataset: { uci: m.uci }, text: m.san, title: m.uci });
      b.addEventListener('click', (e) => {
        e.stopPropagation();
        act(playMove)(m.uci);
      });
      box.append(b);
    }
    $('promo').hidden = false;
  }

  function hidePromo() {
    const p = $('promo');
    if (!p.hidden) {
      p.hidden = true;
      clear($('promo-choices'));
    }
  }

  /** Tries the selection's move(s) to `sq`; true when one was played or offered. */
  function tryMoveTo(sq) {
    if (!play.sel || !humanToMove()) return false;
    const cands = selMoves().filter((m) => m.to === sq);
    if (!cands.length) return false;
    chooseAndPlay(cands);
    return true;
  }

  function onSquareClick(sq) {
    if (!humanToMove()) {
      clearSel();
      return;
    }
    hidePromo();
    if (play.sel) {
      if (tryMoveTo(sq)) return;
      if (play.sel.kind === 'sq' && play.sel.sq === sq) {
        if (play.selOnDown) {
          play.selOnDown = false;
          return;
        }
        clearSel();
        return;
      }
    }
    if (boardMoves(sq).length) {
      play.selOnDown = false;
      setSel({ kind: 'sq', sq });
      return;
    }
    clearSel();
  }

  function onPocketClick(piece, color) {
    if (!humanToMove()) return;
    hidePromo();
    if (color !== play.state.side_to_move || !dropMoves(piece).length) {
      clearSel();
      return;
    }
    if (play.sel && play.sel.kind === 'drop' && play.sel.piece === piece) {
      if (play.selOnDown) {
        play.selOnDown = false;
        return;
      }
      clearSel();
      return;
    }
    play.selOnDown = false;
    setSel({ kind: 'drop', piece });
  }

  /** The square element (anything with data-sq) of an event on the play board, or null. */
  function eventSquare(e) {
    const board = $('board');
    const t = e.target && e.target.closest ? e.target.closest('[data-sq]') : null;
    if (t && board.contains(t)) return t.dataset.sq;
    return null;
  }

  function startDrag(e, info) {
    play.drag = Object.assign({ x: e.clientX, y: e.clientY, moved: false, ghost: null }, info);
  }

  function dragMove(e) {
    const d = play.drag;
    if (!d) return;
    if (!d.moved && Math.hypot(e.clientX - d.x, e.clientY - d.y) < 4) return;
    if (!d.moved) {
      d.moved = true;
      const board = $('board');
      const L = board._layout;
      const size = L ? (board.getBoundingClientRect().width / L.W) * SQ : 60;
      const ghost = h('div', { class: 'drag-ghost' });
      ghost.style.width = ghost.style.height = size + 'px';
      ghost.append(pieceIcon(d.piece, d.color, d.promoted));
      $('drag-layer').append(ghost);
      d.ghost = ghost;
      d.size = size;
      if (d.kind === 'sq') {
        const g = board.querySelector(`g.piece[data-sq="${d.sq}"]`);
        if (g) g.classList.add('dragging');
      }
      document.body.classList.add('dragging');
    }
    d.ghost.style.transform = `translate(${e.clientX - d.size / 2}px, ${e.clientY - d.size / 2}px)`;
    e.preventDefault();
  }

  function endDrag(e) {
    const d = play.drag;
    if (!d) return;
    play.drag = null;
    if (d.ghost) d.ghost.remove();
    document.body.classList.remove('dragging');
    const g = $('board').querySelector('g.piece.dragging');
    if (g) g.classList.remove('dragging');
    let sq = eventSquare(e);
    if (!sq && typeof e.clientX === 'number' && (e.clientX || e.clientY)) sq = squareAtPoint($('board'), e.clientX, e.clientY);
    if (!sq) return;
    if (d.kind === 'sq' && sq === d.sq) return; // a click: the click handler decides
    if (!tryMoveTo(sq) && d.moved) renderBoard();
  }

  function wireBoard() {
    const board = $('board');
    // capture listeners: synthetic events that do not bubble reach them too
    board.addEventListener('mousedown', (e) => {
      if (e.button !== 0) return;
      const sq = eventSquare(e);
      if (!sq) return;
      e.preventDefault();
      if (!humanToMove()) return;
      const pc = pieceAt(sq);
      if (!pc || !boardMoves(sq).length) return;
      if (!(play.sel && play.sel.kind === 'sq' && play.sel.sq === sq)) {
        hidePromo();
        play.selOnDown = true;
        setSel({ kind: 'sq', sq });
      } else {
        play.selOnDown = false;
      }
      startDrag(e, { kind: 'sq', sq, piece: pc.piece, color: pc.color, promoted: pc.promoted });
    }, true);
    board.addEventListener('click', (e) => {
      const sq = eventSquare(e);
      if (sq) onSquareClick(sq);
    }, true);

    for (const id of ['pocket-w', 'pocket-b']) {
      const div = $(id);
      div.addEventListener('mousedown', (e) => {
        if (e.button !== 0) return;
        const t = e.target.closest('.pocket-piece');
        if (!t) return;
        e.preventDefault();
        if (!humanToMove()) return;
        const piece = t.dataset.piece;
        const color = t.dataset.color;
        if (color !== play.state.side_to_move || !dropMoves(piece).length) return;
        if (!(play.sel && play.sel.kind === 'drop' && play.sel.piece === piece)) {
          hidePromo();
          play.selOnDown = true;
          setSel({ kind: 'drop', piece });
        } else {
          play.selOnDown = false;
        }
        startDrag(e, { kind: 'drop', piece, color, promoted: false });
      }, true);
      div.addEventListener('click', (e) => {
        const t = e.target.closest('.pocket-piece');
        if (t) onPocketClick(t.dataset.piece, t.dataset.color);
      }, true);
    }

    window.addEventListener('mousemove', dragMove, true);
    window.addEventListener('mouseup', endDrag, true);
    window.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') {
        hidePromo();
        clearSel();
      }
    });
  }

  // ------------------------------------------------------------------ Analyse
  const an = { es: null, url: null, got: false, fen: '', variant: '', lines: [] };

  function fillAnalyseModels(prefer) {
    const v = $('an-variant').value;
    const models = (app.info && app.info.models || []).filter((m) => m.variant === v);
    const items = [{ value: '', label: 'none: knowledge evaluator' }].concat(
      models.map((m) => ({ value: String(m.id), label: `${m.name}${m.source ? ' (' + m.source + ')' : ''}` })),
    );
    let keep = prefer;
    if (keep === undefined) keep = $('an-model').value;
    fillSelect($('an-model'), items, keep);
  }

  function drawAnalyseBoard() {
    const svg = $('an-board');
    const fen = $('an-fen').value.trim();
    let parsed = null;
    if (fen) {
      try {
        parsed = parseFen(fen);
      } catch (_) {
        parsed = null;
      }
    }
    const vi = variantInfo($('an-variant').value);
    const files = parsed ? parsed.files : vi ? vi.files : 8;
    const ranks = parsed ? parsed.ranks : vi ? vi.ranks : 8;
    const best = an.lines && an.lines[0] ? uciSquares(an.lines[0].uci) : null;
    drawBoard(svg, { files, ranks, flipped: false, pieces: parsed ? parsed.pieces : [], arrow: best });
    const top = $('an-pocket-top');
    const bottom = $('an-pocket-bottom');
    const hands = parsed && parsed.hasHands;
    top.hidden = bottom.hidden = !hands;
    if (hands) {
      drawPocket(top, 'b', parsed.hands.b);
      drawPocket(bottom, 'w', parsed.hands.w);
    }
    const side = parsed ? parsed.side : 'w';
    $('an-persp').textContent = `(${side === 'w' ? 'White' : 'Black'} to move: win / draw / loss)`;
    requestAnimationFrame(() => fitBoard(svg));
  }

  function anSetRunning(running) {
    $('an-start').disabled = false;
    $('an-stop').disabled = !running;
    $('an-start').textContent = running ? 'Restart' : 'Start';
  }

  function anClose(stateText) {
    if (an.es) {
      an.es.close();
      an.es = null;
      busyDown();
    }
    anSetRunning(false);
    if (stateText) $('an-state').textContent = stateText;
  }

  function anRender(d) {
    const wdl = Array.isArray(d.wdl) ? d.wdl : null;
    if (wdl) {
      wdlBar($('an-wdl'), [
        { value: wdl[0], cls: 'win', label: 'win' },
        { value: wdl[1], cls: 'draw', label: 'draw' },
        { value: wdl[2], cls: 'loss', label: 'loss' },
      ], `win ${(wdl[0] / 10).toFixed(1)}% · draw ${(wdl[1] / 10).toFixed(1)}% · loss ${(wdl[2] / 10).toFixed(1)}%`);
    }
    $('an-score').textContent = prettyScore(d.score);
    $('an-score').dataset.score = d.score || '';
    const parts = [];
    if (d.sims != null) parts.push(`${d.sims} sims`);
    if (d.nps != null) parts.push(`${Math.round(d.nps)} sims/s`);
    $('an-sims').textContent = parts.join(' · ');
    const ol = $('an-lines');
    clear(ol);
    an.lines = Array.isArray(d.lines) ? d.lines : [];
    for (const l of an.lines) {
      const li = h('li', { class: 'an-line', dataset: { uci: l.uci || '' } });
      li.append(
        h('span', { class: 'an-san', text: l.san || l.uci || '' }), ' ',
        h('span', { class: 'an-score', dataset: { score: l.score || '' }, text: prettyScore(l.score) }), ' ',
      );
      if (Array.isArray(l.wdl)) {
        const mini = h('span', { class: 'wdl mini' });
        wdlBar(mini, [
          { value: l.wdl[0], cls: 'win', label: 'win' },
          { value: l.wdl[1], cls: 'draw', label: 'draw' },
          { value: l.wdl[2], cls: 'loss', label: 'loss' },
        ], `win ${(l.wdl[0] / 10).toFixed(1)}% · draw ${(l.wdl[1] / 10).toFixed(1)}% · loss ${(l.wdl[2] / 10).toFixed(1)}%`, true);
        li.append(mini, ' ');
      }
      li.append(h('span', { class: 'an-visits', text: l.visits != null ? `${l.visits} visits` : '' }), ' ');
      li.append(h('span', { class: 'an-pv', text: Array.isArray(l.pv) ? l.pv.join(' ') : '' }));
      ol.append(li);
    }
    drawAnalyseBoard();
  }

  function anStart() {
    anClose();
    const variant = $('an-variant').value;
    const fen = $('an-fen').value.trim();
    let seconds = parseFloat($('an-seconds').value);
    if (!(seconds > 0)) seconds = 10;
    const q = new URLSearchParams({ variant });
    if (fen) q.set('fen', fen);
    const model = $('an-model').value;
    if (model !== '') q.set('model', model);
    q.set('seconds', String(seconds));
    const url = '/api/analyse?' + q.toString();
    an.url = url;
    an.got = false;
    an.lines = [];
    clear($('an-lines'));
    clear($('an-wdl'));
    $('an-sims').textContent = '';
    $('an-score').textContent = '';
    drawAnalyseBoard();
    $('an-state').textContent = 'Starting…';
    const es = new EventSource(url);
    an.es = es;
    busyUp();
    anSetRunning(true);
    es.onmessage = (ev) => {
      if (an.es !== es) return;
      let d;
      try {
        d = JSON.parse(ev.data);
      } catch (_) {
        return;
      }
      if (!an.got) clearError();
      an.got = true;
      if (d.error) {
        showError(d.error);
        anClose('Failed.');
        return;
      }
      anRender(d);
      if (d.done) anClose(`Done: ${d.sims != null ? d.sims + ' sims' : 'finished'}.`);
      else $('an-state').textContent = 'Searching…';
    };
    es.onerror = () => {
      if (an.es !== es) return;
      const got = an.got;
      if (!got) explainStreamFailure(url, 'the analysis could not start');
      else showError('the analysis stream was cut');
      anClose(got ? 'Connection lost.' : 'Failed.');
    };
  }

  function anStop() {
    if (an.es) anClose('Stopped.');
  }

  function analyseHere() {
    const st = play.state;
    if (!st) return;
    $('an-variant').value = st.variant;
    const models = (app.info.models || []).filter((m) => m.variant === st.variant);
    fillAnalyseModels(models.length ? String(models[0].id) : '');
    $('an-fen').value = st.fen;
    showPage('analyse', true);
    anStart();
  }

  // ------------------------------------------------------------------ Openings
  const op = { loaded: false, run: null, line: [], data: null, flipped: false, seq: 0 };

  async function opLoad() {
    const run = $('op-run').value;
    if (run === '') {
      op.loaded = true;
      op.data = null;
      opRender();
      return;
    }
    const seq = ++op.seq;
    const q = op.line.length ? '?' + new URLSearchParams({ moves: op.line.map((m) => m.uci).join(',') }).toString() : '';
    let d;
    try {
      d = await api('GET', `/api/runs/${enc(run)}/openings${q}`);
    } catch (e) {
      if (seq === op.seq) {
        op.loaded = true;
        opRender();
      }
      throw e;
    }
    if (seq !== op.seq) return;
    op.loaded = true;
    op.run = run;
    op.data = d;
    // the line keeps the SAN of the rows clicked; the server's own SAN fills any gap
    if (Array.isArray(d.line_san) && d.line_san.length === op.line.length) {
      op.line.forEach((m, i) => {
        if (!m.san) m.san = d.line_san[i];
      });
    }
    opRender();
  }

  function opRender() {
    const d = op.data;
    // line
    const line = $('op-line');
    clear(line);
    const start = h('a', { href: '#', class: 'op-step' + (op.line.length === 0 ? ' current' : ''), dataset: { index: '0' }, text: 'start' });
    line.append(start);
    op.line.forEach((m, i) => {
      line.append(h('span', { class: 'op-sep', text: ' › ' }));
      line.append(h('a', { href: '#', class: 'op-step' + (i === op.line.length - 1 ? ' current' : ''), dataset: { index: String(i + 1), uci: m.uci }, text: m.san || m.uci }));
    });
    // table
    const tbody = $('op-moves').tBodies[0];
    clear(tbody);
    const moves = d && Array.isArray(d.moves) ? d.moves : [];
    for (const m of moves) {
      const tr = h('tr', { class: 'op-move', dataset: { uci: m.uci, san: m.san || '' }, title: 'play this move' });
      const bar = h('div', { class: 'wdl' });
      wdlBar(bar, [
        { value: m.white, cls: 'white', label: 'White wins' },
        { value: m.draws, cls: 'draw', label: 'draws' },
        { value: m.black, cls: 'black', label: 'Black wins' },
      ], `White ${m.white} · draws ${m.draws} · Black ${m.black}`);
      const score = typeof m.score === 'number' ? (m.score <= 1.0001 && m.score >= 0 ? (100 * m.score).toFixed(1) + '%' : m.score.toFixed(2)) : m.score == null ? '–' : String(m.score);
      tr.append(
        h('td', { class: 'op-san', text: m.san || m.uci }),
        h('td', { class: 'num op-games', text: String(m.games) }),
        h('td', { class: 'op-bar' }, bar),
        h('td', { class: 'num op-score', title: "the mover's score", text: score }),
      );
      tbody.append(tr);
    }
    if (!moves.length) {
      tbody.append(h('tr', { class: 'op-none' }, h('td', { colspan: '4', text: d ? 'No game continues from here.' : $('op-run').value === '' ? 'No run: start vzero serve with --run DIR.' : 'Nothing loaded.' })));
    }
    $('op-info').textContent = d ? `${d.games != null ? d.games : '?'} games continue from this position${d.variant ? ' (' + d.variant + ')' : ''}.` : '';
    // board
    let board = null;
    if (d && Array.isArray(d.board) && d.files && d.ranks) {
      board = { files: d.files, ranks: d.ranks, pieces: d.board, hands: d.hands || { w: [], b: [] }, hasHands: !!d.has_drops };
    } else if (d && d.fen) {
      try {
        board = parseFen(d.fen);
      } catch (_) {
        board = null;
      }
    }
    const svg = $('op-board');
    if (board) {
      const lastUci = op.line.length ? op.line[op.line.length - 1].uci : null;
      drawBoard(svg, { files: board.files, ranks: board.ranks, flipped: op.flipped, pieces: board.pieces, lastMove: uciSquares(lastUci) });
    } else {
      drawBoard(svg, { files: 8, ranks: 8, flipped: op.flipped, pieces: [] });
    }
    const top = $('op-pocket-top');
    const bottom = $('op-pocket-bottom');
    const hands = !!(board && board.hasHands);
    top.hidden = bottom.hidden = !hands;
    if (hands) {
      drawPocket(op.flipped ? bottom : top, 'b', board.hands.b);
      drawPocket(op.flipped ? top : bottom, 'w', board.hands.w);
    }
    requestAnimationFrame(() => fitBoard(svg));
  }

  async function opDescend(uci, san) {
    op.line.push({ uci, san });
    try {
      await opLoad();
    } catch (e) {
      op.line.pop();
      opRender();
      throw e;
    }
  }

  async function opBack(index) {
    op.line = op.line.slice(0, index);
    await opLoad();
  }

  // ------------------------------------------------------------------ Run
  const run = { es: null, id: null, last: null, seq: 0 };

  function runDisconnect() {
    if (run.es) {
      run.es.close();
      run.es = null;
    }
  }

  async function runConnect() {
    runDisconnect();
    const id = $('run-select').value;
    run.id = id;
    if (id === '') {
      runRender(null);
      return;
    }
    const seq = ++run.seq;
    const st = await api('GET', `/api/runs/${enc(id)}/status`);
    if (seq !== run.seq) return;
    runRender(st);
    if (app.page !== 'run') return;
    const url = `/api/runs/${enc(id)}/events`;
    const es = new EventSource(url);
    run.es = es;
    let got = false;
    es.onmessage = (ev) => {
      if (run.es !== es) return;
      let d;
      try {
        d = JSON.parse(ev.data);
      } catch (_) {
        return;
      }
      got = true;
      $('run-conn').textContent = '';
      if (d && d.error) {
        showError(d.error);
        return;
      }
      clearError();
      runRender(d);
    };
    es.onerror = () => {
      if (run.es !== es) return;
      if (es.readyState === EventSource.CLOSED) {
        run.es = null;
        $('run-conn').textContent = '(updates stopped)';
        if (!got) explainStreamFailure(url, 'the run\'s updates could not start');
      } else {
        $('run-conn').textContent = '(reconnecting…)';
      }
    };
  }

  function runRender(st) {
    run.last = st;
    const set = (id, v) => ($(id).textContent = v);
    if (!st) {
      for (const id of ['run-variant', 'run-games', 'run-rows', 'run-rate', 'run-resigns', 'run-steps', 'run-gen', 'run-loss']) set(id, '–');
      plot($('run-elo'), { series: [], empty: 'no run' });
      plot($('run-loss-plot'), { series: [], empty: 'no run' });
      clear($('run-procs'));
      return;
    }
    const losses = Array.isArray(st.losses) ? st.losses : [];
    const lastLoss = st.loss != null ? st.loss : losses.length ? losses[losses.length - 1].total : null;
    set('run-variant', st.variant || '–');
    set('run-games', fmtInt(st.games));
    set('run-rows', fmtInt(st.rows));
    set('run-rate', fmtNum(st.games_per_min, 1));
    const rs = st.resigns || {};
    set('run-resigns', rs.resigned == null ? '–' : fmtInt(rs.resigned) + (st.false_resign_rate != null ? ` (${fmtNum(100 * st.false_resign_rate, 1)}% false of ${fmtInt(rs.would_resign)})` : ''));
    set('run-steps', fmtInt(st.steps));
    set('run-gen', fmtInt(st.generation));
    set('run-loss', fmtNum(lastLoss, 4));
    const now = new Date();
    set('run-updated', now.toLocaleTimeString());
    $('run-updated').dataset.unix = String(Math.floor(now.getTime() / 1000));
    $('run-updated').title = st.updated_unix ? 'run read at ' + new Date(st.updated_unix * 1000).toLocaleString() : '';

    const elo = Array.isArray(st.elo) ? st.elo : [];
    plot($('run-elo'), {
      series: [{
        name: 'Elo', cls: 's0', bars: true,
        points: elo.map((e) => ({ x: e.generation, y: e.elo, lo: e.lo, hi: e.hi, tip: `generation ${e.generation}: ${fmtNum(e.elo, 0)} (${fmtNum(e.lo, 0)} .. ${fmtNum(e.hi, 0)})${e.minutes != null ? ', ' + fmtNum(e.minutes, 0) + ' min' : ''}` })),
      }],
      xLabel: 'generation', yLabel: 'Elo', integerX: true, empty: 'no gauntlet results yet',
    });
    plot($('run-loss-plot'), {
      series: [
        { name: 'total', cls: 's0', points: losses.map((l) => ({ x: l.step, y: l.total })) },
        { name: 'policy', cls: 's1', points: losses.map((l) => ({ x: l.step, y: l.policy })) },
        { name: 'value', cls: 's2', points: losses.map((l) => ({ x: l.step, y: l.value })) },
      ],
      xLabel: 'learner step', yLabel: 'loss', empty: 'no learner steps yet', noDots: true,
    });

    const ul = $('run-procs');
    clear(ul);
    const procs = Array.isArray(st.processes) ? st.processes : [];
    for (const p of procs) {
      const li = h('li', { class: 'proc' + (p.state && /dead|stale|stopped|gone/i.test(p.state) ? ' stale' : '') });
      li.append(h('span', { class: 'proc-kind', text: p.kind || '?' }), ' ');
      li.append(h('span', { class: 'proc-where', text: `${p.host || '?'}${p.pid != null ? ':' + p.pid : ''}` }), ' ');
      if (p.state) li.append(h('span', { class: 'proc-state', text: p.state }), ' ');
      if (p.age_s != null) li.append(h('span', { class: 'proc-age', text: `beat ${fmtAge(p.age_s)} ago` }), ' ');
      const extra = [];
      if (p.games != null) extra.push(`${p.games} games`);
      if (p.rows != null) extra.push(`${p.rows} rows`);
      if (p.step != null) extra.push(`step ${p.step}`);
      if (p.generation != null) extra.push(`gen ${p.generation}`);
      if (p.games_per_min != null) extra.push(`${fmtNum(p.games_per_min, 1)} games/min`);
      if (p.steps_per_min != null) extra.push(`${fmtNum(p.steps_per_min, 1)} steps/min`);
      if (p.resigned) extra.push(`${p.resigned} resigned` + (p.false_resign_rate != null ? ` (${fmtNum(100 * p.false_resign_rate, 1)}% false)` : ''));
      if (p.line) extra.push(p.line);
      if (extra.length) li.append(h('span', { class: 'proc-line', text: extra.join(' · ') }));
      ul.append(li);
    }
    if (!procs.length) ul.append(h('li', { class: 'proc-none', text: 'no process has reported' }));

    const nnue = $('run-nnue');
    clear(nnue);
    const extraLines = [];
    if (st.nnue && typeof st.nnue === 'object') {
      const n = st.nnue;
      nnue.append(h('h3', { text: 'NNUE' }));
      const dl = h('dl', { class: 'stats small', id: 'run-nnue-stats' });
      const row = (k, v) => dl.append(h('dt', { text: k }), h('dd', { text: v }));
      row('Positions labelled', fmtInt(n.positions_labelled));
      row('Positions / min (last round)', n.positions_per_min != null ? fmtInt(Math.round(n.positions_per_min)) : '–');
      row('Trainer step', n.train_step != null ? fmtInt(n.train_step) : '–');
      row('Train loss', fmtNum(n.train_loss, 5));
      row('Held-out loss', fmtNum(n.validation_loss, 5));
      nnue.append(dl);
      const nl = Array.isArray(n.losses) ? n.losses : [];
      if (nl.length) {
        const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
        svg.id = 'run-nnue-loss';
        svg.setAttribute('class', 'plot');
        nnue.append(svg);
        plot(svg, {
          series: [
            { name: 'train', cls: 's0', points: nl.filter((l) => l.train != null).map((l) => ({ x: l.step, y: l.train })) },
            { name: 'held out', cls: 's1', points: nl.filter((l) => l.validation != null).map((l) => ({ x: l.step, y: l.validation })) },
          ],
          xLabel: 'NNUE trainer step', yLabel: 'loss', empty: 'no NNUE training yet', noDots: true,
        });
      }
      const nets = Array.isArray(n.nets) ? n.nets : [];
      if (nets.length) {
        const table = h('table', { class: 'nets', id: 'run-nnue-nets' });
        const head = h('tr');
        for (const t of ['round', 'net', 'positions', 'pos/s', 'held-out loss', 'gate score', 'next teacher']) head.append(h('th', { text: t }));
        table.append(head);
        for (const r of nets) {
          const tr = h('tr');
          for (const v of [fmtInt(r.round), r.net, fmtInt(r.positions), fmtInt(Math.round(r.positions_per_s || 0)), fmtNum(r.validation_loss, 5), r.gate_score != null ? fmtNum(100 * r.gate_score, 1) + '%' : 'not gated', r.teacher]) tr.append(h('td', { text: String(v) }));
          table.append(tr);
        }
        nnue.append(table);
      }
    }
    if (Array.isArray(st.warnings)) for (const w of st.warnings) extraLines.push(w);
    const pre = $('run-lines');
    pre.textContent = Array.isArray(st.lines) ? st.lines.join('\n') : '';
    pre.parentElement.hidden = !pre.textContent;
    if (extraLines.length) {
      const ul2 = h('ul', { class: 'warnings' });
      for (const w of extraLines) ul2.append(h('li', { text: String(w) }));
      nnue.append(ul2);
    }
  }

  // ------------------------------------------------------------------ plots
  function niceTicks(min, max, count) {
    if (!(max > min)) {
      const d = Math.abs(min) > 1 ? Math.abs(min) * 0.1 : 1;
      min -= d;
      max += d;
    }
    const raw = (max - min) / count;
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const norm = raw / mag;
    const step = (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * mag;
    const lo = Math.floor(min / step) * step;
    const hi = Math.ceil(max / step) * step;
    const ticks = [];
    for (let v = lo; v <= hi + step * 1e-6; v += step) ticks.push(Math.abs(v) < step * 1e-9 ? 0 : v);
    return { lo, hi, ticks, step };
  }

  function tickText(v, step) {
    if (Math.abs(v) >= 10000) return (v / 1000).toFixed(step >= 1000 ? 0 : 1) + 'k';
    const digits = step >= 1 ? 0 : Math.min(4, Math.ceil(-Math.log10(step)));
    return v.toFixed(digits);
  }

  /** A line plot: o = {series: [{name, cls, points: [{x, y, lo, hi, tip}], bars}], xLabel, yLabel}. */
  function plot(svg, o) {
    const W = 500;
    const H = 280;
    const ml = 54, mr = 22, mb = 40;
    const mt = o.series.length > 1 ? 30 : 12; // room for the legend above the plot
    svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    svg.setAttribute('preserveAspectRatio', 'xMidYMid meet');
    clear(svg);
    const pts = [];
    for (const se of o.series) for (const p of se.points) if (Number.isFinite(p.x) && Number.isFinite(p.y)) pts.push(p);
    if (!pts.length) {
      s('text', { class: 'plot-empty', x: W / 2, y: H / 2, 'text-anchor': 'middle', text: o.empty || 'no data' }, svg);
      return;
    }
    let xmin = Infinity, xmax = -Infinity, ymin = Infinity, ymax = -Infinity;
    for (const p of pts) {
      xmin = Math.min(xmin, p.x);
      xmax = Math.max(xmax, p.x);
      ymin = Math.min(ymin, p.y);
      ymax = Math.max(ymax, p.y);
      if (Number.isFinite(p.lo)) ymin = Math.min(ymin, p.lo);
      if (Number.isFinite(p.hi)) ymax = Math.max(ymax, p.hi);
    }
    const xt = niceTicks(xmin, xmax, 6);
    const yt = niceTicks(ymin, ymax, 5);
    if (o.integerX && xt.step < 1) {
      xt.step = 1;
      xt.ticks = [];
      for (let v = Math.floor(xt.lo); v <= Math.ceil(xt.hi); v++) xt.ticks.push(v);
    }
    const sx = (x) => ml + ((x - xt.lo) / (xt.hi - xt.lo)) * (W - ml - mr);
    const sy = (y) => H - mb - ((y - yt.lo) / (yt.hi - yt.lo)) * (H - mt - mb);
    const grid = s('g', { class: 'plot-grid' }, svg);
    for (const t of yt.ticks) {
      s('line', { x1: ml, x2: W - mr, y1: sy(t), y2: sy(t) }, grid);
      s('text', { class: 'tick', x: ml - 6, y: sy(t), 'text-anchor': 'end', 'dominant-baseline': 'central', text: tickText(t, yt.step) }, grid);
    }
    for (const t of xt.ticks) {
      s('line', { class: 'xgrid', x1: sx(t), x2: sx(t), y1: mt, y2: H - mb }, grid);
      s('text', { class: 'tick', x: sx(t), y: H - mb + 14, 'text-anchor': 'middle', text: tickText(t, xt.step) }, grid);
    }
    s('rect', { class: 'plot-frame', x: ml, y: mt, width: W - ml - mr, height: H - mt - mb }, svg);
    if (o.xLabel) s('text', { class: 'axis-label', x: (ml + W - mr) / 2, y: H - 6, 'text-anchor': 'middle', text: o.xLabel }, svg);
    if (o.yLabel) s('text', { class: 'axis-label', x: 14, y: (mt + H - mb) / 2, 'text-anchor': 'middle', transform: `rotate(-90 14 ${(mt + H - mb) / 2})`, text: o.yLabel }, svg);
    o.series.forEach((se) => {
      const g = s('g', { class: 'series ' + (se.cls || '') }, svg);
      const ps = se.points.filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y)).sort((a, b) => a.x - b.x);
      if (se.bars) {
        for (const p of ps) {
          if (!Number.isFinite(p.lo) || !Number.isFinite(p.hi)) continue;
          const x = sx(p.x);
          s('line', { class: 'bar', x1: x, x2: x, y1: sy(p.lo), y2: sy(p.hi) }, g);
          s('line', { class: 'bar', x1: x - 4, x2: x + 4, y1: sy(p.lo), y2: sy(p.lo) }, g);
          s('line', { class: 'bar', x1: x - 4, x2: x + 4, y1: sy(p.hi), y2: sy(p.hi) }, g);
        }
      }
      if (ps.length > 1) s('polyline', { class: 'line', points: ps.map((p) => `${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`).join(' ') }, g);
      if (!o.noDots || ps.length === 1) {
        for (const p of ps) {
          const c = s('circle', { class: 'dot', cx: sx(p.x), cy: sy(p.y), r: 3.5, 'data-x': p.x, 'data-y': p.y }, g);
          if (p.tip) s('title', { text: p.tip }, c);
        }
      }
    });
    if (o.series.length > 1) {
      const lg = s('g', { class: 'legend' }, svg);
      let x = ml;
      for (const se of o.series) {
        const g = s('g', { class: 'series ' + (se.cls || '') }, lg);
        s('line', { class: 'line', x1: x, x2: x + 18, y1: 14, y2: 14 }, g);
        s('text', { class: 'legend-text', x: x + 22, y: 14, 'dominant-baseline': 'central', text: se.name }, g);
        x += 32 + se.name.length * 8;
      }
    }
  }

  // ------------------------------------------------------------------ wiring
  function wire() {
    for (const p of PAGES) {
      $('tab-' + p).addEventListener('click', (e) => {
        if (e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey) return;
        e.preventDefault();
        if (app.page !== p) act(showPage)(p, true);
      });
    }
    window.addEventListener('popstate', () => act(showPage)(pageOfPath(location.pathname), false));
    window.addEventListener('resize', fitVisibleBoards);
    $('error').addEventListener('click', clearError);

    // Play
    $('variant').addEventListener('change', () => fillPlayerSelects($('white').value, $('black').value));
    $('new-game').addEventListener('click', act(newGame));
    $('takeback').addEventListener('click', act(takeBack));
    $('flip').addEventListener('click', () => {
      play.flipped = !play.flipped;
      renderBoard();
    });
    $('pass').addEventListener('click', () => {
      if (!humanToMove()) return;
      const m = play.state.legal.find((x) => x.pass);
      if (m) act(playMove)(m.uci);
    });
    $('bot-move').addEventListener('click', act(botMove));
    $('analyse-here').addEventListener('click', act(analyseHere));
    $('promo-cancel').addEventListener('click', () => {
      hidePromo();
      clearSel();
    });
    wireBoard();

    // Analyse
    $('an-variant').addEventListener('change', () => {
      fillAnalyseModels();
      drawAnalyseBoard();
    });
    $('an-fen').addEventListener('input', drawAnalyseBoard);
    $('an-start').addEventListener('click', act(anStart));
    $('an-stop').addEventListener('click', anStop);

    // Openings
    $('op-run').addEventListener('change', act(async () => {
      op.line = [];
      await opLoad();
    }));
    $('op-moves').addEventListener('click', (e) => {
      const tr = e.target.closest('tr.op-move');
      if (tr) act(opDescend)(tr.dataset.uci, tr.dataset.san);
    });
    $('op-line').addEventListener('click', (e) => {
      const a = e.target.closest('.op-step');
      if (!a) return;
      e.preventDefault();
      act(opBack)(parseInt(a.dataset.index, 10) || 0);
    });
    $('op-flip').addEventListener('click', () => {
      op.flipped = !op.flipped;
      opRender();
    });

    // Run
    $('run-select').addEventListener('change', act(runConnect));
  }

  async function init() {
    wire();
    renderBusy();
    busyUp();
    const page = pageOfPath(location.pathname);
    try {
      for (const p of PAGES) $('page-' + p).hidden = p !== page;
      const info = await api('GET', '/api/info');
      fillInfo(info);
      await showPage(page, false);
    } catch (err) {
      if (!(err instanceof ApiError && err.shown)) showError(String((err && err.message) || err));
    } finally {
      busyDown();
    }
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
  else init();
})();
