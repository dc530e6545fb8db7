/* nctrace report: the page's pictures, drawn on <canvas> from the JSON that
 * report.c embeds (#nc-data, #nc-env). Hand-written, no library: a
 * timeline (one clock for every rank and thread, zoom, pan, search, legend,
 * labels, GPU streams under the thread that launched their work), a flame
 * chart (click to zoom), the steps and ranks charts, the run header,
 * with --compare two runs side by side, and for instrumented runs the
 * source view (the user's files, each wrapped line range with its time;
 * range names in the tables open it).
 * Every canvas keeps what it drew in its data-* attributes (boxes, labels,
 * matched, view, root) for the browser tests. Plain ES2017, no network,
 * except in the served mode (`nctrace report --serve`, D.serve): there the
 * timeline asks the page's own server (cli/serve.h) for every event of the
 * windows its levels would group. */
(function () {
  'use strict';
  var $ = function (id) { return document.getElementById(id); };
  var D = JSON.parse($('nc-data').textContent);
  var NAMES = D.names, NN = NAMES.length;
  var DPR = window.devicePixelRatio || 1;
  var FONT = '11px sans-serif';

  /* ---- numbers ---- */
  function fmt(ns) {
    var a = Math.abs(ns);
    if (a >= 1e9) return (ns / 1e9).toFixed(3) + ' s';
    if (a >= 1e5) return (ns / 1e6).toFixed(a >= 1e8 ? 1 : 3) + ' ms';
    if (a >= 1e3) return (ns / 1e3).toFixed(2) + ' µs';
    return Math.round(ns) + ' ns';
  }
  function niceStep(span, n) {
    var raw = span / Math.max(1, n), p = Math.pow(10, Math.floor(Math.log10(raw)));
    var m = [1, 2, 5, 10];
    for (var i = 0; i < m.length; i++) if (p * m[i] >= raw) return p * m[i];
    return p * 10;
  }
  function tickLabel(t, step) {
    var u = step >= 1e8 ? 1e9 : step >= 1e5 ? 1e6 : step >= 100 ? 1e3 : 1;
    var unit = u === 1e9 ? ' s' : u === 1e6 ? ' ms' : u === 1e3 ? ' µs' : ' ns';
    var dec = Math.max(0, -Math.floor(Math.log10(step / u) + 1e-9));
    return (t / u).toFixed(Math.min(dec, 6)) + unit;
  }

  /* an offset from the view's start: "+12.5 µs", as many decimals as the step needs */
  function relLabel(t, step) {
    var u = step >= 1e8 ? 1e9 : step >= 1e5 ? 1e6 : step >= 100 ? 1e3 : 1;
    var unit = u === 1e9 ? ' s' : u === 1e6 ? ' ms' : u === 1e3 ? ' µs' : ' ns';
    var q = step / u, dec = 0;
    while (dec < 6 && Math.abs(Math.round(q * Math.pow(10, dec)) - q * Math.pow(10, dec)) > 1e-6 * Math.pow(10, dec)) dec++;
    return '+' + (t / u).toFixed(dec) + unit;
  }

  /* ---- colours: distinct by rank of time (golden-angle hues) ---- */
  var order = [];
  for (var i = 0; i < NN; i++) order.push(i);
  var TOT = D.name_total;
  order.sort(function (a, b) { return (TOT[b] - TOT[a]) || (a - b); });
  var COL = new Array(NN), TXT = new Array(NN), RANKOF = new Array(NN);
  var LIGHT = [50, 38, 64];
  order.forEach(function (n, r) {
    var h = (r * 137.508 + 210) % 360, l = LIGHT[r % 3] + (r >= 30 ? 4 : 0);
    COL[n] = 'hsl(' + h.toFixed(0) + ',' + (r % 2 ? 55 : 70) + '%,' + l + '%)';
    TXT[n] = l < 55 ? '#fff' : '#111';
    RANKOF[n] = r;
  });
  var FADED = '#e4e4e4';
  /* steps (ProfilerStep#N or the --step glob) share one colour and one legend entry */
  var STEPRE = new RegExp('^' + D.step_glob.replace(/[.+^${}()|\\]/g, '\\$&').replace(/\*/g, '.*')
    .replace(/\?/g, '.') + '$');
  var ISSTEP = NAMES.map(function (n) { return STEPRE.test(n); });
  var nsteps = 0;
  for (i = 0; i < NN; i++) if (ISSTEP[i]) { COL[i] = '#9db4cc'; TXT[i] = '#111'; if (TOT[i] > 0) nsteps++; }

  function fitText(ctx, s, w) {
    if (w < 14) return null;
    var max = Math.floor((w - 6) / 6.2);
    if (s.length <= max) return s;
    if (max < 3) return null;
    var t = s.slice(0, max - 1) + '…';
    while (t.length > 2 && ctx.measureText(t).width > w - 6) t = t.slice(0, t.length - 2) + '…';
    return t;
  }

  /* ---- tooltip ---- */
  var tip = document.createElement('div');
  tip.className = 'tip';
  tip.id = 'nc-tip';
  document.body.appendChild(tip);
  function showTip(ev, text) {
    if (!text) { tip.style.display = 'none'; return; }
    tip.textContent = text;
    tip.style.display = 'block';
    var x = ev.clientX + 14, y = ev.clientY + 14, r = tip.getBoundingClientRect();
    if (x + r.width > window.innerWidth) x = ev.clientX - r.width - 10;
    if (y + r.height > window.innerHeight) y = ev.clientY - r.height - 10;
    tip.style.left = x + 'px';
    tip.style.top = y + 'px';
  }
  function hideTip() { tip.style.display = 'none'; }

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.textContent = text;
    return e;
  }
  function sizeCanvas(cv, w, h) {
    cv.width = Math.round(w * DPR);
    cv.height = Math.round(h * DPR);
    cv.style.width = w + 'px';
    cv.style.height = h + 'px';
    var ctx = cv.getContext('2d');
    ctx.setTransform(DPR, 0, 0, DPR, 0, 0);
    return ctx;
  }

  /* ---- search (shared by the timeline and the flame chart) ---- */
  var match = null, matchNames = 0;
  var redrawers = [];
  var searchGen = 0;
  function setSearch(q) {
    searchGen++;
    q = (q || '').trim();
    if (!q) { match = null; matchNames = 0; }
    else {
      match = new Uint8Array(NN);
      matchNames = 0;
      var exact = q.charAt(0) === '=', ql = (exact ? q.slice(1) : q).toLowerCase();
      for (var n = 0; n < NN; n++) {
        var nm = NAMES[n].toLowerCase();
        if (exact ? nm === ql : nm.indexOf(ql) >= 0) { match[n] = 1; matchNames++; }
      }
    }
    redrawers.forEach(function (f) { f(); });
  }

  /* ---- run header ---- */
  function runHeader() {
    var box = $('runhdr'), src = $('nc-env');
    if (!box || !src) return;
    var E;
    try { E = JSON.parse(src.textContent); } catch (e) { return; }
    var env = E.env || {}, rows = [];
    var q = function (a) { return /^[\w@%+=:,./-]+$/.test(a) ? a : "'" + String(a).replace(/'/g, "'\\''") + "'"; };
    if (Array.isArray(env.command)) rows.push(['command', env.command.map(q).join(' ')]);
    if (env.started) rows.push(['date', env.started]);
    if (env.host) rows.push(['host', env.host + (env.kernel ? ' (' + env.kernel + ')' : '')]);
    if (env.cwd) rows.push(['directory', env.cwd]);
    if (env.backend) rows.push(['backend', env.backend]);
    var o = env.options || {}, sched = [], other = [], rulesOpt = [];
    Object.keys(o).forEach(function (k) {
      var v = o[k] === true ? k : k + '=' + (typeof o[k] === 'object' ? JSON.stringify(o[k]) : o[k]);
      (/sched|capture|warmup|active|wait|repeat|step/i.test(k) ? sched : /rule|config/i.test(k) ? rulesOpt : other).push(v);
    });
    if (sched.length) rows.push(['schedule', sched.join('  ')]);
    if (other.length) rows.push(['options', other.join('  ')]);
    var sh = env.shadow, rl = rulesOpt.slice();
    if (sh && typeof sh === 'object') {
      if (sh.rules_digest) rl.push('digest ' + sh.rules_digest);
      if (sh.dir) rl.push('shadow tree ' + sh.dir);
      if (sh.manifest) rl.push('manifest ' + sh.manifest);
    }
    if (rl.length) rows.push(['rules', rl.join(', ')]);
    if (env.gpu && Array.isArray(env.gpu.devices) && env.gpu.devices.length) {
      var m = /Model:\s*([^\n]+)/.exec(env.gpu.devices[0]);
      rows.push(['GPUs', env.gpu.devices.length + (m ? ' × ' + m[1].trim() : '')]);
    }
    if (Array.isArray(env.stages) && env.stages.length)
      rows.push(['stages', env.stages.map(function (s) {
        return (s.name || s.stage || 'stage') + (s.status != null ? ' → ' + s.status : '') +
          (s.seconds != null ? ' (' + Number(s.seconds).toFixed(1) + ' s)' : '');
      }).join(', ')]);
    if (!rows.length) return;
    var t = el('table');
    rows.forEach(function (r) {
      var tr = el('tr');
      tr.appendChild(el('td', null, r[0]));
      tr.appendChild(el('td', null, r[1]));
      t.appendChild(tr);
    });
    box.appendChild(el('p', 'cap', 'Run: ' + E.path));
    box.appendChild(t);
  }

  /* ---- source view: the user's files, each wrapped line range with its time ---- */
  var SRC = D.source || null, SRCAT = {}, NAMEIDX = {};
  NAMES.forEach(function (n, i) { if (!(n in NAMEIDX)) NAMEIDX[n] = i; });
  if (SRC && SRC.ok) SRC.files.forEach(function (f, fi) {
    f.ranges.forEach(function (r, ri) {
      if (!r[4]) return; /* never ran: nothing to open it from */
      (SRCAT[r[0]] = SRCAT[r[0]] || []).push([fi, ri]);
    });
  });
  function srcHas(name) { return Object.prototype.hasOwnProperty.call(SRCAT, name); }
  /* for a tooltip: where a range is in the user's source (the manifest's file and lines), '' if unknown */
  function srcWhere(name) {
    var at = srcHas(name) ? SRCAT[name] : null;
    if (!at) return '';
    var f = SRC.files[at[0][0]], r = f.ranges[at[0][1]];
    return '\nsource: ' + f.path + ':' + r[2] + (r[3] !== r[2] ? '–' + r[3] : '') + ' (' + r[1] + ')' +
      (at.length > 1 ? ', and ' + (at.length - 1) + ' more place' + (at.length > 2 ? 's' : '') + ' of that name' : '');
  }
  /* for a tooltip: what the args of a page name's events say (the trace's
   * own args: a range's file and line, a kernel's grid and block, ...). Keys
   * with one value on every call are shown with it; keys that differ are
   * named only: this page keeps one record per name, not per event. */
  var NARGS = D.name_args || {};
  function argsWhere(idx) {
    var a = NARGS[idx];
    if (!a) return '';
    var same = [], differ = [], more = false;
    a.forEach(function (k) {
      if (k[0] === null) { more = true; return; }
      if (k[2]) differ.push(k[0]);
      else same.push(k[0] + '=' + k[1] + (k[3] ? '…' : ''));
    });
    return (same.length ? '\nargs: ' + same.join(', ') : '') +
      (differ.length ? '\nargs that differ between calls: ' + differ.join(', ') : '') +
      (more ? '\n(more args keys not kept)' : '');
  }
  var srcOpen = function () {};
  function openSource(name, which) { srcOpen(name, which || 0); }
  function esc(s) { return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;'); }
  function sourceView() {
    var root = $('source');
    if (!root || !SRC) return;
    (SRC.notes || []).forEach(function (n) { root.appendChild(el('p', 'cap srcnote', n)); });
    if (!SRC.ok) { root.dataset.files = 0; return; }
    var FILES = SRC.files;
    if (!FILES.length) {
      root.appendChild(el('p', 'cap', 'No range of the manifest (' + SRC.manifest_ranges + ' ranges) ran in these ' +
        'traces.'));
      root.dataset.files = 0;
      return;
    }
    var ALL = D.flame.nodes.length ? D.flame.nodes[2] : 0, GW = 56, RH = 16;
    FILES.forEach(function (f) { f.ranges.forEach(function (r) { ALL = Math.max(ALL, r[5]); }); });
    var bar = el('div', 'bar'), st = el('span', 'st');
    var wrap = el('div', 'srcwrap'), list = el('div', 'srcfiles'), code = el('div', 'srccode');
    list.id = 'source-files';
    code.id = 'source-code';
    bar.appendChild(st);
    wrap.appendChild(list);
    wrap.appendChild(code);
    root.appendChild(bar);
    root.appendChild(wrap);
    var left = SRC.left_out.files ? ' The page holds at most ' + (SRC.cap / 1048576).toFixed(0) + ' MB of source, the files with the most time first: ' + SRC.left_out.files + ' file' +
      (SRC.left_out.files === 1 ? '' : 's') + ' (' + (SRC.left_out.bytes / 1048576).toFixed(1) +
      ' MB) are listed without their text.' : '';
    root.appendChild(el('div', 'help', 'Your source files as the shadow tree\'s manifest maps them: each wrapped ' +
      'line range is marked, its bar ' +
      'scaled by its inclusive time, its label with the time, the share of all ranges\' time, the calls and the ' +
      'self time. Files by the time spent in their ranges and not in a nested range of another file. Click a range name in a table below, or a box in the ' +
      'flame chart or the timeline and then "source", to come here.' + left +
      (SRC.untimed_files ? ' ' + SRC.untimed_files + ' more file' + (SRC.untimed_files === 1 ? '' : 's') +
        ' of the manifest had no range that ran (not listed).' : '') +
      (SRC.unlisted ? ' ' + SRC.unlisted + ' more files with time are not listed.' : '') +
      ' Source tree: ' + (SRC.origin || 'not recorded') + '; shadow tree: ' + SRC.shadow + '.'));
    var maxT = 1;
    FILES.forEach(function (f) { maxT = Math.max(maxT, f.time); });
    var items = FILES.map(function (f, fi) {
      var d = el('div');
      var nm = el('span', null, f.path);
      d.appendChild(nm);
      d.appendChild(el('span', 'st', ' ' + fmt(f.time) + (f.from === 'shadow' ? ' · shadow copy' : '') +
        (f.text == null ? ' · no text' : '')));
      var b = el('i');
      b.style.width = Math.max(1, 100 * f.time / maxT) + '%';
      d.appendChild(b);
      d.title = f.file + '\n' + fmt(f.time) + ' in its ranges, not in a nested range of another file';
      d.onclick = function () { show(fi, -1); };
      list.appendChild(d);
      return d;
    });
    list.dataset.count = FILES.length;
    var cur = -1, info = null;
    function col(name) { var n = NAMEIDX[name]; return n == null ? '#bbb' : COL[n]; }
    function label(r) {
      if (!r[4]) return r[0] + ' · not run in these traces';
      return r[0] + ' · ' + fmt(r[5]) + (ALL ? ' (' + (100 * r[5] / ALL).toFixed(1) + ' % of all)' : '') + ' · ' +
        r[4] + (r[4] === 1 ? ' call' : ' calls') + ' · self ' + fmt(r[6]) + (SRC.gpu ? ' · GPU ' + fmt(r[7]) : '') +
        (r[8] ? ' · ' + (r[8] + 1) + ' ranges share this name: the figures are theirs together' : '');
    }
    function shortLabel(x) { return x.r[0] + ' · the same name as line ' + x.first.r[2] + ': its figures are there'; }
    /* one file: rows of code, ranges outer first; a label row above each range */
    function build(fi) {
      var f = FILES[fi], R = f.ranges.map(function (r, i) { return {r: r, i: i}; });
      R.sort(function (a, b) { return a.r[2] - b.r[2] || b.r[3] - a.r[3] || a.i - b.i; });
      var stack = [], maxD = 0, maxI = 1;
      R.forEach(function (x) {
        while (stack.length && stack[stack.length - 1].r[3] < x.r[2]) stack.pop();
        x.d = stack.length;
        stack.push(x);
        maxD = Math.max(maxD, x.d + 1);
        maxI = Math.max(maxI, x.r[5]);
      });
      var DS = Math.min(maxD, 6), firstOf = {};
      R.forEach(function (x) { x.first = firstOf[x.r[0]] = firstOf[x.r[0]] || x; });
      info = {R: R, byIndex: {}, DS: DS};
      R.forEach(function (x) { info.byIndex[x.i] = x; });
      var h = [];
      h.push('<div class="srchead" title="' + esc(f.file).replace(/"/g, '&quot;') + '">' + esc(f.path) +
        (f.from === 'shadow' ? ' <span class="warn">(the shadow tree\'s copy, with its own line numbers' +
          (f.why ? ': ' + esc(f.why) : '') + ')</span>' : '') + '</div>');
      if (f.text == null) {
        h.push('<p class="cap">' + (f.capped ? 'The text of this file is left out: the page holds at most ' +
          (SRC.cap / 1048576).toFixed(0) + ' MB of source, the files with the most time first.' :
          'This file could not be read' + (f.why ? ': ' + esc(f.why) : '') + '.') + ' Its ranges:</p><table>' +
          '<tr><th>range</th><th>lines</th><th>time</th></tr>' + R.map(function (x) {
            return '<tr data-r="' + x.i + '"><td>' + esc(x.r[0]) + '</td><td>' + x.r[2] + '–' + x.r[3] + '</td><td>' +
              esc(label(x.r).slice(x.r[0].length + 3)) + '</td></tr>';
          }).join('') + '</table>');
        code.innerHTML = h.join('');
        code.dataset.rows = 0;
        return;
      }
      var lines = f.text.split('\n');
      if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
      var starts = {}, cover = new Array(lines.length + 2);
      R.forEach(function (x) {
        (starts[x.r[2]] = starts[x.r[2]] || []).push(x);
        for (var l = x.r[2]; l <= Math.min(x.r[3], lines.length); l++) (cover[l] = cover[l] || []).push(x);
      });
      /* rows of 16 px: a label row above each range, then its lines; only
       * the rows in view are in the page (a file may have 100 000 lines) */
      var rows = [];
      for (var l = 1; l <= lines.length; l++) {
        (starts[l] || []).forEach(function (x) { x.row = rows.length; rows.push({x: x, l: l}); });
        rows.push({l: l});
      }
      info.lines = lines;
      info.cover = cover;
      info.rowsOf = rows;
      info.maxI = maxI;
      h.push('<div class="srcbody" style="height:' + rows.length * RH + 'px"><div class="srcwin"></div></div>');
      code.innerHTML = h.join('');
      info.body = code.lastChild;
      info.win = info.body.firstChild;
      info.from = info.to = -1;
      code.dataset.rows = lines.length;
    }
    function stripes(cv, upto) {
      var s = '', at = [];
      (cv || []).forEach(function (x) { if (x.d < upto) at[Math.min(x.d, info.DS - 1)] = x; });
      for (var d = 0; d < info.DS; d++) s += at[d] ? '<b style="background:' + col(at[d].r[0]) + '"></b>' : '<b></b>';
      return '<span class="ss">' + s + '</span>';
    }
    function rowHtml(row) {
      var x = row.x, sel = info.selx, l = row.l, cv = info.cover[l];
      if (x) {
        var on = sel && (x === sel || (x.r[2] >= sel.r[2] && x.r[2] <= sel.r[3] && x.d > sel.d));
        return '<div class="sa' + (on ? ' sel' : '') + '" data-r="' + x.i + '"><span class="sg"></span>' +
          stripes(cv, x.d + 1) + '<span class="sn"></span><span class="lab" style="margin-left:' + (x.d * 14) +
          'px;border-color:' + col(x.r[0]) + '">' + esc(x.first === x ? label(x.r) : shortLabel(x)) + '</span></div>';
      }
      var inner = cv ? cv[cv.length - 1] : null, t = info.lines[l - 1];
      if (t.charAt(t.length - 1) === '\r') t = t.slice(0, -1);
      return '<div class="sl' + (sel && l >= sel.r[2] && l <= sel.r[3] ? ' sel' : '') + '" data-l="' + l + '"' +
        (inner ? ' data-r="' + inner.i + '"' : '') + '><span class="sg">' + (inner && inner.r[5] ? '<i' +
        (inner.r[8] ? ' class="shared"' : '') + ' style="width:' + Math.max(1, GW * inner.r[5] / info.maxI).toFixed(1) +
        'px;background-color:' + col(inner.r[0]) + '"></i>' : '') + '</span>' + stripes(cv, 99) +
        '<span class="sn">' + l + '</span><span class="sc">' + esc(t) + '</span></div>';
    }
    /* the rows in view, with 60 more on each side */
    function paint(force) {
      if (!info || !info.rowsOf) return;
      var top = code.scrollTop - info.body.offsetTop, n = info.rowsOf.length;
      var a = Math.max(0, Math.floor(top / RH) - 60), b = Math.min(n, Math.ceil((top + code.clientHeight) / RH) + 60);
      if (!force && a >= info.from && b <= info.to) return;
      a = Math.max(0, a - 60);
      b = Math.min(n, b + 60);
      var h = [];
      for (var i = a; i < b; i++) h.push(rowHtml(info.rowsOf[i]));
      info.win.style.top = a * RH + 'px';
      info.win.innerHTML = h.join('');
      info.from = a;
      info.to = b;
    }
    code.addEventListener('scroll', function () { paint(false); });
    function show(fi, ri) {
      if (fi !== cur) { build(fi); cur = fi; code.scrollTop = 0; }
      items.forEach(function (d, i) { d.className = i === fi ? 'on' : ''; });
      var f = FILES[fi], x = ri >= 0 ? info.byIndex[ri] : null;
      info.selx = x;
      if (x && info.rowsOf && x.row != null) code.scrollTop = Math.max(0, info.body.offsetTop + x.row * RH - 48);
      paint(true);
      st.textContent = f.path + ' · ' + fmt(f.time) + ' in its own ranges · ' + f.ranges.length + ' range' +
        (f.ranges.length === 1 ? '' : 's') + (x ? ' · ' + x.r[0] + ', lines ' + x.r[2] + '–' + x.r[3] +
        (f.from === 'shadow' ? ' of the shadow copy' : '') : '');
      code.dataset.file = f.path;
      code.dataset.from = f.from;
      code.dataset.range = x ? x.r[0] : '';
      code.dataset.lines = x ? x.r[2] + '-' + x.r[3] : '';
      code.dataset.label = x ? label(x.r) : '';
      code.dataset.selected = x && info.lines ? Math.max(0, Math.min(x.r[3], info.lines.length) - x.r[2] + 1) : 0;
    }
    srcOpen = function (name, which) {
      var at = SRCAT[name];
      if (!at) return;
      var p = at[Math.min(which, at.length - 1)];
      show(p[0], p[1]);
      var h = $('source-h') || root;
      h.scrollIntoView({block: 'start'});
    };
    code.addEventListener('click', function (ev) {
      var t = ev.target.closest ? ev.target.closest('[data-r]') : null;
      if (t && code.contains(t)) show(cur, +t.dataset.r);
    });
    code.addEventListener('mousemove', function (ev) {
      var t = ev.target.closest ? ev.target.closest('.sg, .ss') : null;
      var row = t ? t.parentNode : null;
      if (!row || !row.dataset.r || !info) { hideTip(); return; }
      var x = info.byIndex[+row.dataset.r];
      showTip(ev, x ? label(x.r).replace(/ · /g, '\n') + '\nlines ' + x.r[2] + '–' + x.r[3] + ' (' + x.r[1] + ')' : '');
    });
    code.addEventListener('mouseleave', hideTip);
    show(0, -1);
    root.dataset.files = FILES.length;
    window.ncReport.source = {open: openSource, places: function (n) { return (SRCAT[n] || []).length; }};
  }
  /* range names in the summary's tables (first column "range") open the source view */
  function linkTables() {
    ['summary', 'compare-tables'].forEach(function (id) {
      var box = $(id);
      if (!box) return;
      Array.prototype.forEach.call(box.querySelectorAll('table'), function (t) {
        var th = t.querySelector('th');
        if (!th || th.textContent.trim() !== 'range') return;
        Array.prototype.forEach.call(t.querySelectorAll('tbody tr'), function (tr) {
          var td = tr.querySelector('td'), name = td ? td.textContent : '';
          if (!td || !srcHas(name)) return;
          var a = el('a', 'srclink', name);
          a.href = '#source';
          a.title = 'show its lines in the source view';
          a.onclick = function (ev) { ev.preventDefault(); openSource(name); };
          td.textContent = '';
          td.appendChild(a);
        });
      });
    });
  }

  /* ---- timeline ---- */
  function timeline() {
    var root = $('timeline'), TL = D.timeline;
    if (!root) return;
    var SPAN = TL.span, LABEL = 240, AXIS = 24, LH = 15, RH = 20;
    var levels = TL.levels.map(function (L) {
      return {res: L.res, full: L.full, lanes: L.lanes.map(function (a) {
        var n = 0, i;
        for (i = 0; i < a.length; n++) i += a[i + 2] < 0 ? 5 + a[i + 4] : 3;
        var s = new Float64Array(n), d = new Float64Array(n), nm = new Int32Array(n), c = new Uint32Array(n);
        var ex = {}, t = 0, k = 0;
        for (i = 0; i < a.length; k++) {
          t += a[i] * L.q;
          s[k] = t;
          d[k] = a[i + 1];
          var x = a[i + 2];
          if (x < 0) {
            nm[k] = -1 - x; c[k] = a[i + 3];
            if (a[i + 4]) ex[k] = a.slice(i + 5, i + 5 + a[i + 4]);
            i += 5 + a[i + 4];
          } else { nm[k] = x; c[k] = 1; i += 3; }
        }
        return {s: s, d: d, nm: nm, c: c, ex: ex, n: n};
      })};
    });
    /* The served mode (D.serve): where the level drawn groups short events,
     * the server sends every event of a window around the view (three view
     * widths), per lane; a lane with more than CAP events there comes back
     * null and keeps its groups. The answer is drawn until the view leaves
     * its window, or zooms well into it while some lane was null. One
     * question at a time; the view is drawn from the levels meanwhile. */
    var SERVE = D.serve || null, CAP = 4000, live = null, asking = null, asks = 0;
    function liveLanes(j) {
      var lanes = [], full = true;
      j.lanes.forEach(function (a) {
        if (!a) { lanes.push(null); full = false; return; }
        var n = a.length / 6, s = new Float64Array(n), d = new Float64Array(n), nm = new Int32Array(n);
        var c = new Uint32Array(n), ord = new Float64Array(n), corr = new Float64Array(n), by = new Float64Array(n);
        for (var k = 0, i = 0; k < n; k++, i += 6) {
          s[k] = a[i]; d[k] = a[i + 1]; nm[k] = a[i + 2]; c[k] = 1; ord[k] = a[i + 3]; corr[k] = a[i + 4]; by[k] = a[i + 5];
        }
        lanes.push({s: s, d: d, nm: nm, c: c, ex: {}, n: n, ord: ord, corr: corr, bytes: by, live: true});
      });
      return {a: j.a, b: j.b, l0: j.l0, lanes: lanes, full: full};
    }
    function liveCovers(a, b) {
      return !!live && live.a <= a && live.b >= b && (live.full || (b - a) * 6 > live.b - live.a);
    }
    function ask(a, b) {
      if (asking) return; /* draw() asks again, if still needed, when the answer comes */
      var w = b - a, qa = Math.floor(a - w), qb = Math.ceil(b + w), t = performance.now();
      asking = true;
      asks++;
      fetch(SERVE.api + '?a=' + qa + '&b=' + qb + '&cap=' + CAP).then(function (r) {
        if (!r.ok) throw new Error('the server answered ' + r.status);
        return r.json();
      }).then(function (j) {
        live = liveLanes(j);
        asking = null;
        cv.dataset.liveask = (performance.now() - t).toFixed(1);
        draw();
      }).catch(function (e) {
        asking = null;
        cv.dataset.liveerror = String(e);
      });
    }
    function laneOf(lv, lane, useLive) {
      var x = useLive ? live.lanes[lane - live.l0] : null;
      return x || lv.lanes[lane];
    }
    /* rows: a band per rank, then each track's lanes */
    var rows = [], y = 0, ntracks = 0;
    TL.ranks.forEach(function (r) {
      rows.push({kind: 'rank', y: y, h: RH, label: 'rank ' + r.rank + '  ·  ' + r.file});
      y += RH;
      r.tracks.forEach(function (tr) {
        ntracks++;
        for (var j = 0; j < tr.lanes; j++) {
          var lbl = j === 0 ? (tr.under ? '↳ ' : '') + tr.label
            : j === tr.lanes - tr.async ? (tr.under ? '   ' : '') + 'start/end spans' : null;
          rows.push({kind: 'lane', y: y, h: LH, lane: tr.lane0 + j, label: lbl, track: tr, rank: r.rank,
                     first: j === 0});
          y += LH;
        }
        y += 3;
      });
    });
    var totalH = y + AXIS;
    var bar = el('div', 'bar');
    var search = el('input');
    search.type = 'search';
    search.placeholder = 'search names (=exact); Enter: next';
    search.id = 'tl-search';
    search.setAttribute('list', 'nc-names');
    var dl = el('datalist');
    dl.id = 'nc-names';
    order.slice(0, 3000).forEach(function (n) { var o = el('option'); o.value = NAMES[n]; dl.appendChild(o); });
    bar.appendChild(search);
    bar.appendChild(dl);
    var btn = function (t, title, f) { var b = el('button', null, t); b.title = title; b.onclick = f; bar.appendChild(b); return b; };
    var st = el('span', 'st');
    var legend = el('div', 'legend');
    var scroller = el('div', 'scroller');
    var cv = el('canvas');
    cv.id = 'timeline-canvas';
    var spacer = el('div');
    scroller.appendChild(cv);
    scroller.appendChild(spacer);
    var meas = el('div', 'measure');
    meas.id = 'tl-measure';
    meas.style.display = 'none';
    root.appendChild(bar);
    root.appendChild(legend);
    root.appendChild(meas);
    root.appendChild(scroller);
    var help = el('div', 'help', 'Wheel or W/S (↑/↓): zoom at the pointer · A/D (←/→): pan · drag: measure an ' +
      'interval (its duration, events and top names; Esc or a click clears it) · shift+drag: pan (and scroll the ' +
      'tracks) · shift+wheel: scroll the tracks · double-click a box: zoom to it · search, then Enter / ' +
      'Shift+Enter: next / previous match · hover: name, time, source location, args' +
      (SRC && SRC.ok && SRC.files.length ? ' · click a range: "source of" it shows its lines' : '') + '. Boxes marked ×N stand for N ' +
      'events too short to draw apart at this zoom (coloured by the name with the most time among them): zoom in ' +
      'to split them.');
    root.appendChild(help);

    var v0 = 0, v1 = SPAN, W = 800, H = 400, ctx = null;
    var found = null;   /* search matches: {gen, s, d, n, at, grouped} */
    var measure = null; /* the measured interval: {a, b} (ns) */
    var mouseX = -1;    /* the pointer over the plot (px from the canvas' left), -1 if away */
    function clampView() {
      var w = v1 - v0, minw = 50;
      if (w < minw) { var c = (v0 + v1) / 2; v0 = c - minw / 2; v1 = c + minw / 2; w = minw; }
      if (w > SPAN * 1.05) { v0 = -SPAN * 0.025; v1 = SPAN * 1.025; return; }
      if (v0 < -SPAN * 0.025) { v0 = -SPAN * 0.025; v1 = v0 + w; }
      if (v1 > SPAN * 1.025) { v1 = SPAN * 1.025; v0 = v1 - w; }
    }
    function zoomAt(t, f) { v0 = t - (t - v0) * f; v1 = t + (v1 - t) * f; clampView(); draw(); }
    btn('−', 'zoom out', function () { zoomAt((v0 + v1) / 2, 2); });
    btn('+', 'zoom in', function () { zoomAt((v0 + v1) / 2, 0.5); });
    btn('◀', 'pan left', function () { var w = v1 - v0; v0 -= w / 3; v1 -= w / 3; clampView(); draw(); });
    btn('▶', 'pan right', function () { var w = v1 - v0; v0 += w / 3; v1 += w / 3; clampView(); draw(); });
    btn('whole run', 'show the whole run', function () { v0 = 0; v1 = SPAN; draw(); });
    var picked = null;
    var srcBtn = btn('source', 'show the clicked range\'s lines in the source view', function () { openSource(picked); });
    srcBtn.id = 'timeline-source';
    srcBtn.style.display = 'none';
    bar.appendChild(st);

    /* legend: the names with the most time, click to highlight */
    var LEG = Math.min(order.length, 24);
    if (nsteps) {
      var ss = el('span'), ssw = el('i');
      ssw.style.background = '#9db4cc';
      ss.appendChild(ssw);
      ss.appendChild(document.createTextNode(D.step_glob + ' (' + nsteps + ' steps)'));
      ss.onclick = function () { var q = D.step_glob.split('*')[0]; search.value = search.value === q ? '' : q; setSearch(search.value); };
      legend.appendChild(ss);
    }
    var legendNames = order.filter(function (n) { return !ISSTEP[n] && TOT[n] > 0; });
    LEG = Math.min(legendNames.length, LEG);
    for (var li = 0; li < LEG; li++) (function (n) {
      var s = el('span');
      var sw = el('i');
      sw.style.background = COL[n];
      s.appendChild(sw);
      s.appendChild(document.createTextNode(NAMES[n].length > 48 ? NAMES[n].slice(0, 47) + '…' : NAMES[n]));
      s.title = NAMES[n] + ': ' + fmt(TOT[n]) + ' in the timeline';
      s.onclick = function () { search.value = search.value === '=' + NAMES[n] ? '' : '=' + NAMES[n]; setSearch(search.value); };
      s.dataset.name = n;
      legend.appendChild(s);
    })(legendNames[li]);
    if (legendNames.length > LEG) legend.appendChild(el('span', null, '+ ' + (legendNames.length - LEG) + ' more names: search to find any'));

    function layout() {
      W = Math.max(400, root.clientWidth - 2);
      H = Math.min(totalH, 640);
      ctx = sizeCanvas(cv, W, H);
      scroller.style.height = H + 'px';
      spacer.style.height = Math.max(0, totalH - H) + 'px';
    }
    function pickLevel(nsPerPx) {
      for (var i = 0; i < levels.length; i++) if (levels[i].res <= nsPerPx) return i;
      return levels.length - 1;
    }
    function firstBox(L, t) { /* first box that ends after t */
      var lo = 0, hi = L.n;
      while (lo < hi) { var mid = (lo + hi) >> 1; if (L.s[mid] < t) lo = mid + 1; else hi = mid; }
      while (lo > 0 && L.s[lo - 1] + L.d[lo - 1] > t) lo--;
      return lo;
    }
    var hatch = null;
    function draw() {
      if (!ctx) return;
      ctx.font = FONT;
      ctx.textBaseline = 'middle';
      if (!hatch) {
        var hc = document.createElement('canvas');
        hc.width = hc.height = 6;
        var hx = hc.getContext('2d');
        hx.strokeStyle = 'rgba(255,255,255,0.55)';
        hx.lineWidth = 1.5;
        hx.beginPath(); hx.moveTo(0, 6); hx.lineTo(6, 0); hx.stroke();
        hatch = ctx.createPattern(hc, 'repeat');
      }
      ctx.clearRect(0, 0, W, H);
      var plotW = W - LABEL, npp = (v1 - v0) / plotW, lvI = pickLevel(npp), lv = levels[lvI];
      var X = function (t) { return LABEL + (t - v0) / npp; };
      var t0d = performance.now(), useLive = false, liveUsed = 0, lanesSeen = 0;
      if (SERVE && !lv.full) { if (liveCovers(v0, v1)) useLive = true; else ask(v0, v1); }
      var step = niceStep(v1 - v0, plotW / 110), ticks = [];
      for (var t = v0 + step; t <= v1; t += step) ticks.push(t);
      ctx.strokeStyle = '#eee';
      ctx.lineWidth = 1;
      ctx.beginPath();
      ticks.forEach(function (t) { var x = Math.round(X(t)) + 0.5; ctx.moveTo(x, AXIS); ctx.lineTo(x, H); });
      ctx.stroke();
      var top = scroller.scrollTop, drawn = 0, grouped = 0, labels = 0, matched = 0, sig = 0, labelTexts = [];
      for (var ri = 0; ri < rows.length; ri++) {
        var row = rows[ri], ry = AXIS + row.y - top;
        if (ry + row.h < AXIS || ry > H) continue;
        if (row.kind === 'rank') {
          ctx.fillStyle = '#e8eef6';
          ctx.fillRect(0, ry, W, row.h);
          ctx.fillStyle = '#123';
          ctx.font = 'bold 12px sans-serif';
          ctx.fillText(row.label, 4, ry + row.h / 2);
          ctx.font = FONT;
          continue;
        }
        if (row.first) { ctx.fillStyle = '#ddd'; ctx.fillRect(0, ry - 2, W, 1); }
        var L = laneOf(lv, row.lane, useLive);
        lanesSeen++;
        if (L.live) liveUsed++;
        var lastPx = -1, lastCol = null;
        ctx.save();
        ctx.beginPath();
        ctx.rect(LABEL, ry, plotW, row.h);
        ctx.clip();
        for (var k = firstBox(L, v0); k < L.n && L.s[k] <= v1; k++) {
          var x0 = X(L.s[k]), x1 = X(L.s[k] + L.d[k]);
          if (x0 < LABEL - 1) x0 = LABEL - 1;
          if (x1 > W + 1) x1 = W + 1;
          var w = x1 - x0, nm = L.nm[k], hit = !match || match[nm];
          if (!hit && L.c[k] > 1 && L.ex[k]) { /* a run: matched by any of its names */
            var more = L.ex[k];
            for (var mi = 0; mi < more.length; mi++) if (match[more[mi]]) { nm = more[mi]; hit = true; break; }
          }
          var col = hit ? COL[nm] : FADED;
          if (w < 1) {
            var px = x0 | 0;
            if (px === lastPx && col === lastCol) continue;
            lastPx = px; lastCol = col; w = 1;
          } else lastPx = -1;
          ctx.fillStyle = col;
          ctx.fillRect(x0, ry + 1, w, row.h - 2);
          drawn++;
          if (L.c[k] > 1) grouped++;
          sig = (sig * 31 + nm + (x0 | 0)) % 1000000007;
          if (match && hit) matched++;
          if (L.c[k] > 1 && w > 3) { ctx.fillStyle = hatch; ctx.fillRect(x0, ry + 1, w, row.h - 2); }
          if (w > 24) {
            var vis0 = Math.max(x0, LABEL), vw = Math.min(x1, W) - vis0;
            var lt = (L.c[k] > 1 ? L.c[k] + '× ' : '') + NAMES[nm], lf = lt + ' · ' + fmt(L.d[k]);
            var s = lf.length * 6.2 <= vw - 6 ? lf : fitText(ctx, lt, vw);
            if (s && labelTexts.length < 200) labelTexts.push(s);
            if (s) { ctx.fillStyle = hit ? TXT[nm] : '#999'; ctx.fillText(s, vis0 + 3, ry + row.h / 2 + 0.5); labels++; }
          }
        }
        ctx.restore();
        if (row.label) {
          ctx.fillStyle = '#fff';
          ctx.fillRect(0, ry, LABEL - 2, row.h);
          ctx.fillStyle = row.track.gpu ? '#264' : '#333';
          var ls = fitText(ctx, row.label, LABEL - 4);
          if (ls) ctx.fillText(ls, 4, ry + row.h / 2 + 0.5);
        }
      }
      /* the axis, on top */
      ctx.fillStyle = '#fafafa';
      ctx.fillRect(0, 0, W, AXIS);
      ctx.fillStyle = '#ccc';
      ctx.fillRect(0, AXIS - 1, W, 1);
      ctx.fillStyle = '#333';
      ctx.strokeStyle = '#888';
      ctx.beginPath();
      ticks.forEach(function (t) {
        var x = Math.round(X(t)) + 0.5;
        ctx.moveTo(x, AXIS - 6); ctx.lineTo(x, AXIS - 1);
        ctx.fillText(relLabel(t - v0, step), x + 3, 9);
      });
      ctx.stroke();
      ctx.fillStyle = '#555';
      ctx.fillText('from ' + fmt(v0) + ' (since the first event)', 4, 9);
      /* the measured interval: a band over the tracks, its duration on the axis */
      if (measure) {
        var ma = Math.min(measure.a, measure.b), mb = Math.max(measure.a, measure.b);
        var mx0 = Math.max(LABEL, X(ma)), mx1 = Math.min(W, X(mb));
        if (mx1 >= LABEL && mx0 <= W) {
          ctx.fillStyle = 'rgba(40,90,200,0.13)';
          ctx.fillRect(mx0, AXIS, Math.max(1, mx1 - mx0), H - AXIS);
          ctx.fillStyle = '#2a5ac8';
          ctx.fillRect(X(ma), AXIS, 1, H - AXIS);
          ctx.fillRect(X(mb), AXIS, 1, H - AXIS);
          var ml = fmt(mb - ma), mw = ctx.measureText(ml).width + 8, mc = Math.max(LABEL, Math.min(W - mw, (mx0 + mx1) / 2 - mw / 2));
          ctx.fillRect(mc, AXIS + 2, mw, 14);
          ctx.fillStyle = '#fff';
          ctx.fillText(ml, mc + 4, AXIS + 9);
        }
      }
      cv.dataset.ticks = JSON.stringify(ticks.map(function (t) { return relLabel(t - v0, step); }));
      cv.dataset.labeltexts = JSON.stringify(labelTexts);
      cv.dataset.boxes = drawn;
      cv.dataset.grouped = grouped;
      cv.dataset.labels = labels;
      cv.dataset.matched = matched;
      cv.dataset.view = Math.round(v0) + ',' + Math.round(v1);
      cv.dataset.level = lvI;
      cv.dataset.sig = sig;
      cv.dataset.match = found && found.gen === searchGen && found.at >= 0 ? (found.at + 1) + ' of ' + found.n : '';
      cv.dataset.drawms = (performance.now() - t0d).toFixed(2);
      cv.dataset.live = liveUsed;
      cv.dataset.full = lv.full ? 1 : 0;
      cv.dataset.asks = asks;
      var shown = fmt(Math.max(0, Math.min(v1, SPAN) - Math.max(v0, 0)));
      st.textContent = 'showing ' + shown + ' of ' + fmt(SPAN) + ' (' + fmt(Math.max(v0, 0)) + ' to ' +
        fmt(Math.min(v1, SPAN)) + ') · ' + TL.events + ' events on ' + ntracks + ' tracks, ' + TL.ranks.length +
        ' rank' + (TL.ranks.length === 1 ? '' : 's') + ' · ' + (lv.full ? 'every event drawn' :
        liveUsed && liveUsed === lanesSeen ? 'every event drawn (from the server)' :
        'zoom level ' + (lvI + 1) + ' of ' + levels.length + ', short events grouped' +
        (liveUsed ? ' except on ' + liveUsed + ' lanes (every event, from the server)' : '') +
        (SERVE && asking ? ' · asking the server for every event' : '')) + ' · ' + drawn + ' boxes' +
        (match ? ' · ' + matchNames + ' names match, ' + matched + ' boxes highlighted' +
          (found && found.gen === searchGen ? ' · match ' + (found.at >= 0 ? (found.at + 1) + ' of ' + found.n
            : found.n + (found.n === 1 ? ' match' : ' matches')) + (found.grouped ? ' (some grouped: zoom in)' : '') +
            ': Enter / Shift+Enter' : ' · Enter: step through them') : '') +
        (TL.dropped ? ' · ' + TL.dropped + ' events nested over 64 deep not drawn' : '');
    }
    redrawers.push(draw);
    function boxAt(ev) {
      var r = cv.getBoundingClientRect(), mx = ev.clientX - r.left, my = ev.clientY - r.top;
      if (mx < LABEL || my < AXIS) return null;
      var yy = my - AXIS + scroller.scrollTop, row = null;
      for (var i = 0; i < rows.length; i++) if (yy >= rows[i].y && yy < rows[i].y + rows[i].h) { row = rows[i]; break; }
      if (!row || row.kind !== 'lane') return null;
      var npp = (v1 - v0) / (W - LABEL), lv = levels[pickLevel(npp)];
      var L = laneOf(lv, row.lane, !!SERVE && !lv.full && liveCovers(v0, v1));
      var t = v0 + (mx - LABEL) * npp, k = firstBox(L, t - 2 * npp);
      var best = -1;
      for (; k < L.n && L.s[k] <= t + 2 * npp; k++) { best = k; if (L.s[k] + L.d[k] >= t) break; }
      if (best < 0) return null;
      return {row: row, L: L, k: best};
    }
    var drag = null;
    cv.addEventListener('wheel', function (ev) {
      ev.preventDefault();
      if (ev.shiftKey) { scroller.scrollTop += ev.deltaY || ev.deltaX; return; }
      var r = cv.getBoundingClientRect(), mx = Math.max(LABEL, ev.clientX - r.left);
      var t = v0 + (mx - LABEL) * (v1 - v0) / (W - LABEL);
      zoomAt(t, Math.exp(Math.max(-300, Math.min(300, ev.deltaY)) * 0.002));
    }, {passive: false});
    scroller.addEventListener('scroll', draw);
    var moved = false;
    function timeAt(clientX) {
      var r = cv.getBoundingClientRect(), mx = Math.max(LABEL, Math.min(W, clientX - r.left));
      return v0 + (mx - LABEL) * (v1 - v0) / (W - LABEL);
    }
    cv.addEventListener('mousedown', function (ev) {
      var r = cv.getBoundingClientRect();
      var pan = ev.shiftKey || ev.button === 1 || ev.clientX - r.left < LABEL;
      drag = {x: ev.clientX, y: ev.clientY, v0: v0, v1: v1, top: scroller.scrollTop, pan: pan, t: timeAt(ev.clientX)};
      moved = false;
      ev.preventDefault();
    });
    window.addEventListener('mouseup', function () {
      if (drag && !drag.pan && moved && measure) showMeasure();
      drag = null;
    });
    /* what the measured interval holds: the finest level's boxes that overlap it */
    function showMeasure() {
      var a = Math.min(measure.a, measure.b), b = Math.max(measure.a, measure.b);
      var lv = levels[levels.length - 1], n = 0, by = {}, grouped = false;
      lv.lanes.forEach(function (L) {
        for (var k = firstBox(L, a); k < L.n && L.s[k] < b; k++) {
          var o = Math.min(b, L.s[k] + L.d[k]) - Math.max(a, L.s[k]);
          if (o < 0 || (o === 0 && L.d[k] > 0)) continue;
          n += L.c[k];
          if (L.c[k] > 1) grouped = true;
          by[L.nm[k]] = (by[L.nm[k]] || 0) + o;
        }
      });
      var top = Object.keys(by).map(Number).sort(function (x, y) { return by[y] - by[x] || x - y; }).slice(0, 5);
      meas.textContent = 'measured ' + fmt(b - a) + ' (' + fmt(a) + ' to ' + fmt(b) + '): ' + n + ' event' +
        (n === 1 ? '' : 's') + (grouped ? ' (short ones counted in their groups)' : '') +
        (top.length ? '; the most time, summed over the tracks, in ' + top.map(function (x) { return NAMES[x] + ' ' + fmt(by[x]); }).join(', ') : '') +
        ' · Esc or a click clears it';
      meas.style.display = '';
      cv.dataset.measure = Math.round(a) + ',' + Math.round(b);
      cv.dataset.measured = n;
    }
    function clearMeasure() {
      if (!measure) return;
      measure = null;
      meas.style.display = 'none';
      meas.textContent = '';
      cv.dataset.measure = '';
      cv.dataset.measured = '';
      draw();
    }
    cv.addEventListener('click', function (ev) {
      if (moved) return;
      clearMeasure();
      var b = boxAt(ev), name = b && b.L.c[b.k] === 1 ? NAMES[b.L.nm[b.k]] : null;
      picked = name && srcHas(name) ? name : null;
      srcBtn.style.display = picked ? '' : 'none';
      srcBtn.textContent = picked ? 'source of ' + (picked.length > 40 ? picked.slice(0, 39) + '…' : picked) : 'source';
    });
    window.addEventListener('mousemove', function (ev) {
      if (!drag) return;
      if (Math.abs(ev.clientX - drag.x) + Math.abs(ev.clientY - drag.y) > 3) moved = true;
      if (!drag.pan) {
        if (!moved) return;
        measure = {a: drag.t, b: timeAt(ev.clientX)};
        draw();
        showMeasure();
        return;
      }
      var npp = (drag.v1 - drag.v0) / (W - LABEL);
      v0 = drag.v0 - (ev.clientX - drag.x) * npp;
      v1 = drag.v1 - (ev.clientX - drag.x) * npp;
      clampView();
      scroller.scrollTop = drag.top - (ev.clientY - drag.y);
      draw();
    });
    cv.addEventListener('mousemove', function (ev) {
      if (drag) { hideTip(); return; }
      var b = boxAt(ev);
      if (!b) { hideTip(); return; }
      var L = b.L, k = b.k, nm = NAMES[L.nm[k]];
      var text = L.c[k] > 1
        ? L.c[k] + ' events in ' + fmt(L.d[k]) + ', the most time in ' + nm +
          (L.ex[k] ? ', then ' + L.ex[k].map(function (n) { return NAMES[n]; }).join(', ') : '') +
          ' (zoom in to see each)'
        : nm + '\n' + fmt(L.d[k]);
      text += '\nstarts at ' + fmt(L.s[k]) + '\nrank ' + b.row.rank + ', ' + b.row.track.label;
      if (L.c[k] === 1) text += srcWhere(nm) + argsWhere(L.nm[k]);
      if (L.live) text += '\nevent ' + L.ord[k] + ' of its file\'s traceEvents' +
        (L.corr[k] >= 0 ? ', correlation ' + L.corr[k] : '') + (L.bytes[k] >= 0 ? ', ' + L.bytes[k] + ' bytes' : '');
      showTip(ev, text);
    });
    cv.addEventListener('mouseleave', function () { hideTip(); mouseX = -1; });
    cv.addEventListener('mousemove', function (ev) {
      var mx = ev.clientX - cv.getBoundingClientRect().left;
      mouseX = mx >= LABEL ? mx : -1;
    });
    cv.addEventListener('dblclick', function (ev) {
      var b = boxAt(ev);
      if (!b) return;
      var s = b.L.s[b.k], d = Math.max(b.L.d[b.k], 100);
      v0 = s - d * 0.1; v1 = s + d * 1.1; clampView(); draw();
    });
    search.addEventListener('input', function () { found = null; setSearch(search.value); });
    /* every matching box of the finest level, in time order (a group counts once, by its start) */
    function findMatches() {
      if (found && found.gen === searchGen) return found;
      var lv = levels[levels.length - 1], S = [], grouped = false;
      lv.lanes.forEach(function (L) {
        for (var k = 0; k < L.n; k++) {
          var hit = match[L.nm[k]];
          if (!hit && L.c[k] > 1 && L.ex[k]) hit = L.ex[k].some(function (x) { return match[x]; });
          if (hit) { S.push([L.s[k], L.d[k]]); if (L.c[k] > 1) grouped = true; }
        }
      });
      S.sort(function (a, b) { return a[0] - b[0] || a[1] - b[1]; });
      found = {gen: searchGen, S: S, n: S.length, at: -1, grouped: grouped};
      return found;
    }
    function stepMatch(dir) {
      if (!match) return;
      var f = findMatches();
      if (!f.n) { draw(); return; }
      if (f.at < 0) { /* the first match at or after the view's start (the last before its end, backwards) */
        var i = 0;
        if (dir > 0) { while (i < f.n && f.S[i][0] < v0) i++; if (i === f.n) i = 0; }
        else { i = f.n - 1; while (i >= 0 && f.S[i][0] > v1) i--; if (i < 0) i = f.n - 1; }
        f.at = i;
      } else f.at = (f.at + dir + f.n) % f.n;
      /* centred, the box a little over half the plot's width */
      var m = f.S[f.at], w = Math.max(m[1] * 1.8, 200), c = m[0] + m[1] / 2;
      v0 = c - w / 2; v1 = c + w / 2;
      draw();
    }
    search.addEventListener('keydown', function (ev) {
      if (ev.key !== 'Enter') return;
      ev.preventDefault();
      stepMatch(ev.shiftKey ? -1 : 1);
    });
    /* W/S zoom (at the pointer when it is over the plot), A/D pan, the arrows alike; Esc clears the measurement */
    document.addEventListener('keydown', function (ev) {
      if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
      var tg = ev.target, tn = tg && tg.tagName;
      if (tn === 'INPUT' || tn === 'TEXTAREA' || tn === 'SELECT' || (tg && tg.isContentEditable)) return;
      if (ev.key === 'Escape') { clearMeasure(); return; }
      var r = cv.getBoundingClientRect();
      if (r.bottom < 0 || r.top > window.innerHeight) return; /* the timeline is not on screen */
      var key = ev.key.length === 1 ? ev.key.toLowerCase() : ev.key, w = v1 - v0;
      var at = mouseX >= LABEL ? v0 + (mouseX - LABEL) * w / (W - LABEL) : (v0 + v1) / 2;
      if (key === 'w' || key === 'ArrowUp') zoomAt(at, 0.8);
      else if (key === 's' || key === 'ArrowDown') zoomAt(at, 1.25);
      else if (key === 'a' || key === 'ArrowLeft') { v0 -= w * 0.2; v1 -= w * 0.2; clampView(); draw(); }
      else if (key === 'd' || key === 'ArrowRight') { v0 += w * 0.2; v1 += w * 0.2; clampView(); draw(); }
      else return;
      ev.preventDefault();
    });
    window.addEventListener('resize', function () { layout(); draw(); });
    layout();
    draw();
    window.ncReport.timeline = {zoom: function (a, b) { v0 = a; v1 = b; clampView(); draw(); }, span: SPAN};
  }

  /* ---- flame chart ---- */
  function flame() {
    var root = $('flame'), F = D.flame.nodes, N = F.length / 3;
    if (!root) return;
    if (!N) { root.appendChild(el('p', 'cap', 'No CPU ranges in these traces.')); return; }
    var par = new Int32Array(N), nm = new Int32Array(N), tot = new Float64Array(N);
    var off = new Float64Array(N), dep = new Int32Array(N), end = new Int32Array(N), next = new Float64Array(N);
    var maxDep = 0, i;
    for (i = 0; i < N; i++) {
      par[i] = F[3 * i]; nm[i] = F[3 * i + 1]; tot[i] = F[3 * i + 2];
      if (par[i] >= 0) {
        var p = par[i];
        dep[i] = dep[p] + 1;
        off[i] = off[p] + next[p];
        next[p] += tot[i];
        if (dep[i] > maxDep) maxDep = dep[i];
      }
    }
    for (i = N - 1; i >= 0; i--) end[i] = Math.max(end[i], i + 1);
    for (i = N - 1; i > 0; i--) if (end[i] > end[par[i]]) end[par[i]] = end[i];
    var RH = 17, zr = 0, W = 800, ctx, hits = [];
    var bar = el('div', 'bar'), crumbs = el('span', 'st'), cv = el('canvas');
    cv.id = 'flame-canvas';
    var reset = el('button', null, 'whole tree');
    reset.onclick = function () { zr = 0; draw(); };
    bar.appendChild(reset);
    var srcBtn = el('button', null, 'source');
    srcBtn.id = 'flame-source';
    srcBtn.title = 'show the zoomed range\'s lines in the source view';
    srcBtn.onclick = function () { openSource(NAMES[nm[zr]]); };
    bar.appendChild(srcBtn);
    bar.appendChild(crumbs);
    root.appendChild(bar);
    root.appendChild(cv);
    root.appendChild(el('div', 'help', 'Range nesting, every thread and rank together: each box is a call path, ' +
      'its width the path\'s total time, children under their parent, widest first' +
      (D.flame.built > D.flame.shown ? ' (' + D.flame.shown + ' widest of ' + D.flame.built + ' paths)' : '') +
      '. Steps (' + D.step_glob + ') are one row. Click a box to zoom to it, a row above to zoom out' +
      (SRC && SRC.ok && SRC.files.length ? '; "source" then shows its lines' : '') + '.'));
    function draw() {
      W = Math.max(400, root.clientWidth - 2);
      var zd = dep[zr], rowsN = maxDep + 1;
      ctx = sizeCanvas(cv, W, rowsN * RH + 4);
      ctx.font = FONT;
      ctx.textBaseline = 'middle';
      hits = [];
      var drawn = 0, labels = 0, matched = 0, labelTexts = [];
      /* ancestors of the zoomed node: full width, greyed */
      var anc = [], a = zr;
      while (a >= 0) { anc.unshift(a); a = par[a]; }
      anc.forEach(function (k, d) {
        if (k === zr) return;
        ctx.fillStyle = '#d8d8d8';
        ctx.fillRect(0, d * RH, W, RH - 1);
        ctx.fillStyle = '#333';
        var s = fitText(ctx, NAMES[nm[k]] + ' — ' + fmt(tot[k]), W);
        if (s) ctx.fillText(s, 4, d * RH + RH / 2);
        hits.push([0, d * RH, W, k]);
      });
      var scale = W / tot[zr], o0 = off[zr];
      for (var k = zr; k < end[zr]; k++) {
        var x = (off[k] - o0) * scale, w = tot[k] * scale;
        if (w < 0.4) { k = end[k] - 1; continue; }
        var y = dep[k] * RH, hit = !match || match[nm[k]];
        ctx.fillStyle = k === 0 ? '#bbb' : hit ? COL[nm[k]] : FADED;
        ctx.fillRect(x, y, Math.max(w - 0.5, 0.5), RH - 1);
        drawn++;
        if (match && hit) matched++;
        hits.push([x, y, w, k]);
        var full = NAMES[nm[k]] + ' · ' + fmt(tot[k]);
        var s2 = full.length * 6.2 <= w - 6 ? full : fitText(ctx, NAMES[nm[k]], w);
        if (s2 && labelTexts.length < 200) labelTexts.push(s2);
        if (s2) { ctx.fillStyle = k === 0 ? '#111' : hit ? TXT[nm[k]] : '#999'; ctx.fillText(s2, x + 3, y + RH / 2); labels++; }
      }
      crumbs.textContent = anc.map(function (k) { return NAMES[nm[k]]; }).join(' › ') + ' — ' + fmt(tot[zr]) +
        (zr ? ' (' + (100 * tot[zr] / tot[0]).toFixed(1) + ' % of all)' : '') + ' · ' + drawn + ' boxes';
      cv.dataset.boxes = drawn;
      cv.dataset.labels = labels;
      cv.dataset.matched = matched;
      cv.dataset.root = NAMES[nm[zr]];
      cv.dataset.labeltexts = JSON.stringify(labelTexts);
      srcBtn.style.display = zr && srcHas(NAMES[nm[zr]]) ? '' : 'none';
      void zd;
    }
    function hitAt(ev) {
      var r = cv.getBoundingClientRect(), mx = ev.clientX - r.left, my = ev.clientY - r.top;
      for (var i = hits.length - 1; i >= 0; i--) {
        var h = hits[i];
        if (mx >= h[0] && mx < h[0] + Math.max(h[2], 1) && my >= h[1] && my < h[1] + RH) return h[3];
      }
      return -1;
    }
    cv.addEventListener('click', function (ev) { var k = hitAt(ev); if (k >= 0) { zr = k; draw(); hideTip(); } });
    cv.addEventListener('mousemove', function (ev) {
      var k = hitAt(ev);
      if (k < 0) { hideTip(); return; }
      showTip(ev, NAMES[nm[k]] + '\n' + fmt(tot[k]) + ' (' + (100 * tot[k] / tot[0]).toFixed(1) + ' % of all' +
        (par[k] >= 0 ? ', ' + (100 * tot[k] / tot[par[k]]).toFixed(1) + ' % of ' + NAMES[nm[par[k]]] : '') + ')' +
        srcWhere(NAMES[nm[k]]) + argsWhere(nm[k]));
    });
    cv.addEventListener('mouseleave', hideTip);
    redrawers.push(draw);
    window.addEventListener('resize', draw);
    draw();
  }

  /* ---- bar charts with numbered axes ---- */
  var RANKCOL = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#9c755f'];
  function axisY(ctx, x, y0, y1, max, W) {
    var step = niceStep(max, 5);
    ctx.fillStyle = '#333';
    ctx.strokeStyle = '#e6e6e6';
    ctx.textAlign = 'right';
    for (var v = 0; v <= max * 1.0001; v += step) {
      var y = y1 - (v / max) * (y1 - y0);
      ctx.beginPath(); ctx.moveTo(x, Math.round(y) + 0.5); ctx.lineTo(W, Math.round(y) + 0.5); ctx.stroke();
      ctx.fillText(tickLabel(v, step), x - 4, y);
    }
    ctx.textAlign = 'left';
  }
  function steps() {
    var root = $('steps'), S = D.steps, n = S.length / 4;
    if (!root) return;
    if (!n) { root.appendChild(el('p', 'cap', 'No steps (ranges named ' + D.step_glob + ', or --step GLOB) in these traces.')); return; }
    var byRank = {}, ranks = [];
    for (var i = 0; i < n; i++) {
      var r = S[4 * i];
      if (!byRank[r]) { byRank[r] = []; ranks.push(r); }
      byRank[r].push(i);
    }
    var slots = 0, max = 1;
    ranks.forEach(function (r) { slots = Math.max(slots, byRank[r].length); });
    for (i = 0; i < n; i++) max = Math.max(max, S[4 * i + 2]);
    var step = niceStep(max, 5);
    max = Math.ceil(max / step) * step;
    var cv = el('canvas');
    cv.id = 'steps-canvas';
    root.appendChild(el('div', 'bar', 'Step time per step, in order' + (ranks.length > 1 ? ', one bar per rank' : '') +
      '; the darker part is the GPU time attributed to the step' +
      (D.steps_total > n ? ' (first ' + n + ' of ' + D.steps_total + ' steps)' : '')));
    root.appendChild(cv);
    var H = 240, ML = 70, MB = 40, MT = 10, bars = [];
    function draw() {
      var W = Math.max(400, root.clientWidth - 2), ctx = sizeCanvas(cv, W, H);
      ctx.font = FONT;
      ctx.textBaseline = 'middle';
      var y1 = H - MB, pw = W - ML - 10, sw = pw / slots, bw = Math.max(1, sw * 0.8 / ranks.length);
      axisY(ctx, ML, MT, y1, max, W - 10);
      bars = [];
      ranks.forEach(function (r, ri) {
        var col = RANKCOL[ri % RANKCOL.length];
        byRank[r].forEach(function (i, j) {
          var x = ML + j * sw + sw * 0.1 + ri * bw, h = S[4 * i + 2] / max * (y1 - MT), g = S[4 * i + 3] / max * (y1 - MT);
          ctx.globalAlpha = 0.45; ctx.fillStyle = col; ctx.fillRect(x, y1 - h, bw, h);
          ctx.globalAlpha = 1; ctx.fillRect(x, y1 - g, bw, g);
          bars.push([x, y1 - h, bw, h, i, j]);
        });
      });
      ctx.fillStyle = '#333';
      ctx.fillRect(ML, y1, pw, 1);
      ctx.textAlign = 'center';
      var every = Math.max(1, Math.ceil(40 / sw));
      every = every <= 1 ? 1 : every <= 2 ? 2 : every <= 5 ? 5 : Math.ceil(every / 10) * 10;
      for (var j = 0; j < slots; j++) if ((j + 1) % every === 0 || j === 0) ctx.fillText(String(j + 1), ML + (j + 0.5) * sw, y1 + 10);
      ctx.fillText('step (in order' + (ranks.length > 1 ? ', per rank' : '') + ')', ML + pw / 2, H - 10);
      ctx.textAlign = 'left';
      var lx = ML + 4;
      if (ranks.length > 1) ranks.forEach(function (r, ri) {
        ctx.fillStyle = RANKCOL[ri % RANKCOL.length]; ctx.fillRect(lx, H - 14, 10, 8);
        ctx.fillStyle = '#333'; ctx.fillText('rank ' + r, lx + 13, H - 10); lx += 60;
      });
      cv.dataset.bars = bars.length;
    }
    cv.addEventListener('mousemove', function (ev) {
      var rc = cv.getBoundingClientRect(), mx = ev.clientX - rc.left;
      for (var k = 0; k < bars.length; k++) {
        var b = bars[k];
        if (mx >= b[0] && mx < b[0] + Math.max(b[2], 1)) {
          var i = b[4];
          showTip(ev, 'rank ' + S[4 * i] + ', step ' + (b[5] + 1) + ': ' + NAMES[S[4 * i + 1]] + '\n' + fmt(S[4 * i + 2]) +
            ', GPU ' + fmt(S[4 * i + 3]));
          return;
        }
      }
      hideTip();
    });
    cv.addEventListener('mouseleave', hideTip);
    window.addEventListener('resize', draw);
    draw();
  }
  function ranks() {
    var root = $('ranks'), R = D.ranks;
    if (!root || !R.length) return;
    var M = [['CPU span', '#8c8c8c'], ['GPU busy', '#2f5d8a'], ['compute', '#3c9a5f'], ['communication', '#b07aa1'],
             ['GPU idle', '#d08c2f']];
    var use = [], max = 1;
    M.forEach(function (m, k) { if (R.some(function (r) { return r[k + 1] > 0; })) use.push(k); });
    if (!use.length) use.push(0);
    R.forEach(function (r) { use.forEach(function (k) { max = Math.max(max, r[k + 1]); }); });
    var step = niceStep(max, 6);
    max = Math.ceil(max / step) * step;
    var cv = el('canvas');
    cv.id = 'ranks-canvas';
    root.appendChild(el('div', 'bar', 'Per rank: ' + use.map(function (k) { return M[k][0]; }).join(', ') +
      (use.length < M.length ? ' (the others are zero in these traces)' : '')));
    root.appendChild(cv);
    var BH = 12, GAP = 10, ML = 90, MB = 44, bars = [];
    function draw() {
      var W = Math.max(400, root.clientWidth - 2), gh = use.length * BH + GAP, H = R.length * gh + MB + 6;
      var ctx = sizeCanvas(cv, W, H), pw = W - ML - 20, x = function (v) { return ML + v / max * pw; };
      ctx.font = FONT;
      ctx.textBaseline = 'middle';
      var yb = R.length * gh + 4;
      ctx.strokeStyle = '#e6e6e6';
      ctx.fillStyle = '#333';
      ctx.textAlign = 'center';
      for (var v = 0; v <= max * 1.0001; v += step) {
        var xx = Math.round(x(v)) + 0.5;
        ctx.beginPath(); ctx.moveTo(xx, 0); ctx.lineTo(xx, yb); ctx.stroke();
        ctx.fillText(tickLabel(v, step), xx, yb + 10);
      }
      ctx.textAlign = 'left';
      bars = [];
      R.forEach(function (r, i) {
        var y = i * gh + 4;
        ctx.fillStyle = '#123';
        ctx.font = 'bold 12px sans-serif';
        ctx.fillText('rank ' + r[0], 4, y + use.length * BH / 2);
        ctx.font = FONT;
        use.forEach(function (k, j) {
          ctx.fillStyle = M[k][1];
          ctx.fillRect(ML, y + j * BH, x(r[k + 1]) - ML, BH - 2);
          bars.push([y + j * BH, i, k]);
        });
      });
      var lx = ML;
      use.forEach(function (k) {
        ctx.fillStyle = M[k][1]; ctx.fillRect(lx, H - 14, 10, 8);
        ctx.fillStyle = '#333'; ctx.fillText(M[k][0], lx + 13, H - 10); lx += ctx.measureText(M[k][0]).width + 30;
      });
      cv.dataset.bars = bars.length;
    }
    cv.addEventListener('mousemove', function (ev) {
      var rc = cv.getBoundingClientRect(), my = ev.clientY - rc.top;
      for (var i = 0; i < bars.length; i++)
        if (my >= bars[i][0] && my < bars[i][0] + BH) {
          var r = R[bars[i][1]];
          showTip(ev, 'rank ' + r[0] + ' ' + M[bars[i][2]][0] + ': ' + fmt(r[bars[i][2] + 1]));
          return;
        }
      hideTip();
    });
    cv.addEventListener('mouseleave', hideTip);
    window.addEventListener('resize', draw);
    draw();
  }

  /* ---- comparison of two runs (--compare): paired bars, the change beside ---- */
  function pText(p) { return p < 0.001 ? '< 0.001' : '= ' + p.toFixed(3); }

  function compare() {
    var root = $('compare'), C = D.compare;
    if (!root || !C) return;
    var mode = 'ranges', metric = 0, TOP = 25;
    var METRICS = [['inclusive', 4], ['exclusive', 6], ['GPU', 8]];
    var bar = el('div', 'bar');
    var mk = function (t, f) { var b = el('button', null, t); b.onclick = f; bar.appendChild(b); return b; };
    var bR = mk('ranges', function () { mode = 'ranges'; draw(); });
    var bK = mk('kernels', function () { mode = 'kernels'; draw(); });
    var sel = el('select');
    METRICS.forEach(function (m, i) { var o = el('option', null, m[0] + ' time'); o.value = i; sel.appendChild(o); });
    sel.onchange = function () { metric = +sel.value; draw(); };
    bar.appendChild(sel);
    var st = el('span', 'st');
    bar.appendChild(st);
    var cv = el('canvas');
    cv.id = 'compare-canvas';
    root.appendChild(bar);
    root.appendChild(cv);
    /* the verdicts are nctrace diff's (core/diff.c), one per row: 2 significant,
     * 1 within noise, 0 unknown; the page only sorts and labels by them */
    var VERDICT = ['unknown', 'within noise', 'significant'], RANK = [1, 2, 0];
    var sn = C.step_noise;
    root.appendChild(el('div', 'help', 'A: ' + C.a + ' (grey) · B: ' + C.b + ' (blue). ' +
      (C.per_step ? 'The runs have different step counts: every figure is per step. ' : '') +
      'Rows: significant changes first, then unknown, then within noise (nctrace diff\'s test of inclusive ' +
      'time, GPU time for kernels, against the per-call spread; p < 0.05), each group by the size of the change; ' +
      'red: B takes longer, green: B is faster, grey: within noise. ' +
      (sn && sn[0] ? 'The mean step\'s change is ' + VERDICT[sn[0]] + ' (p ' + pText(sn[1]) + '). ' : '') +
      'The tables below have every figure.'));
    var rowsDrawn = [];
    function draw() {
      var rows = (mode === 'ranges' ? C.ranges : C.kernels).map(function (r) {
        var ai = mode === 'ranges' ? METRICS[metric][1] : 8;
        return {name: r[0], inn: r[1], ca: r[2], cb: r[3], a: r[ai], b: r[ai + 1], sig: r[10], p: r[11], ci: r[12]};
      }).filter(function (r) { return r.a || r.b; });
      rows.sort(function (x, y) {
        return RANK[x.sig] - RANK[y.sig] || Math.abs(y.b - y.a) - Math.abs(x.b - x.a) || (x.name < y.name ? -1 : 1);
      });
      rows = rows.slice(0, TOP);
      sel.style.display = mode === 'ranges' ? '' : 'none';
      bR.disabled = mode === 'ranges';
      bK.disabled = mode === 'kernels';
      var W = Math.max(500, root.clientWidth - 2), RH = 26, ML = 300, MR = 300, MT = 24;
      var H = MT + rows.length * RH + 8, ctx = sizeCanvas(cv, W, Math.max(H, 60));
      ctx.font = FONT;
      ctx.textBaseline = 'middle';
      var max = 1;
      rows.forEach(function (r) { max = Math.max(max, r.a, r.b); });
      var step = niceStep(max, 5);
      max = Math.ceil(max / step) * step;
      var pw = W - ML - MR, X = function (v) { return ML + v / max * pw; };
      ctx.strokeStyle = '#e6e6e6';
      ctx.fillStyle = '#333';
      ctx.textAlign = 'center';
      for (var v = 0; v <= max * 1.0001; v += step) {
        var xx = Math.round(X(v)) + 0.5;
        ctx.beginPath(); ctx.moveTo(xx, MT - 4); ctx.lineTo(xx, H); ctx.stroke();
        ctx.fillText(tickLabel(v, step), xx, 10);
      }
      ctx.textAlign = 'left';
      rowsDrawn = [];
      rows.forEach(function (r, i) {
        var y = MT + i * RH;
        ctx.fillStyle = '#222';
        var lbl = fitText(ctx, r.name + (r.inn === 1 ? ' (A only)' : r.inn === 2 ? ' (B only)' : ''), ML - 8);
        if (lbl) ctx.fillText(lbl, 4, y + RH / 2);
        var noise = r.sig === 1;
        ctx.globalAlpha = noise ? 0.4 : 1;
        ctx.fillStyle = '#a8a8a8';
        ctx.fillRect(ML, y + 3, X(r.a) - ML, 9);
        ctx.fillStyle = '#2f6db0';
        ctx.fillRect(ML, y + 13, X(r.b) - ML, 9);
        ctx.globalAlpha = 1;
        var d = r.b - r.a, pct = r.a ? ' (' + (d >= 0 ? '+' : '') + (100 * d / r.a).toFixed(1) + ' %)' : '';
        ctx.fillStyle = noise ? '#888' : d > 0 ? '#b3261e' : d < 0 ? '#1e7b34' : '#555';
        ctx.fillText((d >= 0 ? '+' : '−') + fmt(Math.abs(d)) + pct + '  ' + VERDICT[r.sig], W - MR + 8, y + RH / 2);
        rowsDrawn.push([y, r]);
      });
      st.textContent = rows.length + ' of ' + (mode === 'ranges' ? C.ranges_total : C.kernels_total) + ' ' + mode +
        ': significant changes first, then by the change' +
        (mode === 'ranges' ? ' in ' + METRICS[metric][0] + ' time' : ' in GPU time');
      cv.dataset.rows = rows.length;
      cv.dataset.mode = mode + ':' + metric;
      cv.dataset.first = rows.length ? rows[0].name : '';
      cv.dataset.order = JSON.stringify(rows.map(function (r) { return r.name; }));
      cv.dataset.verdicts = JSON.stringify(rows.map(function (r) { return VERDICT[r.sig]; }));
    }
    cv.addEventListener('mousemove', function (ev) {
      var rc = cv.getBoundingClientRect(), my = ev.clientY - rc.top;
      for (var i = 0; i < rowsDrawn.length; i++) {
        var y = rowsDrawn[i][0], r = rowsDrawn[i][1];
        if (my >= y && my < y + 26) {
          showTip(ev, r.name + '\nA: ' + fmt(r.a) + ' (' + r.ca + '×)\nB: ' + fmt(r.b) + ' (' + r.cb + '×)' +
            (C.per_step ? '\nper step' : '') + '\n' + VERDICT[r.sig] +
            (r.sig ? ' (p ' + pText(r.p) + ', ±' + fmt(r.ci) + ' at 95 %, ' +
             (mode === 'ranges' ? 'inclusive' : 'GPU') + ' time)' : ': no spread to measure (one call on a side, one run per side)'));
          return;
        }
      }
      hideTip();
    });
    cv.addEventListener('mouseleave', hideTip);
    window.addEventListener('resize', draw);
    draw();
  }

  window.ncReport = {ready: false};
  runHeader();
  timeline();
  flame();
  sourceView();
  linkTables();
  steps();
  ranks();
  compare();
  window.ncReport.ready = true;
  document.body.dataset.ready = '1';
})();
