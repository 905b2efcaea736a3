// fieldbrain live monitor: one WebSocket (/ws), messages pushed by the server
// (docs/web-monitor.md): hello, robots (4 Hz; one at once on connect), history (the selected
// robot's recent plot points, on selection), telemetry (its new points), field (the selected
// slice, 2 Hz and on selection), error. The page sends only its selection.
(function () {
  'use strict';
  const WINDOW = 300;  // plot points kept per series
  const MOTOR_COLOURS = ['#4fb3ff', '#ff9f43', '#3ecf8e', '#f368e0', '#feca57', '#a29bfe',
                         '#ff6b6b', '#1dd1a1'];
  const state = {
    ws: null, retryMs: 500, robots: [], selected: null, channel: 0, z: -1, resolution: 0,
    motorDim: 0, series: null, motorPlot: null, signalPlot: null, drawQueued: false,
    field: null,
  };
  const CYCLE_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000,
                       100000, 200000, 500000, 1000000];
  const $ = (id) => document.getElementById(id);

  // ---- connection -------------------------------------------------------------------------
  function connect() {
    const ws = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/ws');
    state.ws = ws;
    ws.onopen = () => {
      state.retryMs = 500;
      setConnection(true, 'live');
      sendSelection();
    };
    ws.onclose = () => {
      setConnection(false, 'disconnected, retrying…');
      setTimeout(connect, state.retryMs);
      state.retryMs = Math.min(5000, state.retryMs * 2);
    };
    ws.onmessage = (event) => {
      let msg;
      try { msg = JSON.parse(event.data); } catch (e) { return; }
      if (msg.type === 'robots') onRobots(msg);
      else if (msg.type === 'telemetry') onTelemetry(msg);
      else if (msg.type === 'history') onHistory(msg);
      else if (msg.type === 'field') onField(msg);
      else if (msg.type === 'error') console.warn('server:', msg.message);
    };
  }
  function setConnection(up, text) {
    $('connection').className = 'connection ' + (up ? 'up' : 'down');
    $('connection-text').textContent = text;
  }
  function sendSelection() {
    if (!state.ws || state.ws.readyState !== WebSocket.OPEN || !state.selected) return;
    state.ws.send(JSON.stringify({ type: 'select', robot: state.selected, channel: state.channel, z: state.z }));
  }

  // ---- robots and totals --------------------------------------------------------------------
  const fmt = (v, digits) => (v === undefined || v === null) ? '–' : Number(v).toFixed(digits);
  const count = (v) => (v === undefined || v === null) ? '–' : Number(v).toLocaleString('en-US');
  function uptime(s) {
    s = Math.floor(s || 0);
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
    return h ? `${h}h ${m}m` : (m ? `${m}m ${s % 60}s` : `${s}s`);
  }
  function onRobots(msg) {
    state.robots = msg.robots;
    if (!state.firstRobots) state.firstRobots = msg.robots;
    if (msg.resolution && msg.resolution !== state.resolution) setResolution(msg.resolution);
    const t = msg.totals;
    state.totals = t;
    $('t-robots').textContent = count(t.robots);
    $('t-robot-cycles').textContent = count(t.robot_cycles);
    $('t-brain-calls').textContent = count(t.brain_calls);
    $('t-per-call').textContent = fmt(t.robots_per_call, 2);
    $('t-saves').textContent = count(t.saves);
    $('t-errors').textContent = count(t.errors);
    $('t-dropped').textContent = count(t.web_dropped);
    $('t-uptime').textContent = uptime(t.uptime_s);
    const live = msg.robots.filter((r) => r.state !== 'refused');
    if ((!state.selected || !live.some((r) => r.key === state.selected)) && live.length) {
      select(live[0].key);
    }
    renderTable();
    renderSlow();
  }
  // Robots whose replies come later than their loop waits (server: latency_watch.h).
  function renderSlow() {
    const slow = state.robots.filter((r) => r.over_budget);
    const box = $('slow-robots');
    box.hidden = !slow.length;
    if (!slow.length) return;
    box.textContent = slow.map((r) =>
      `${r.key}: replies take ${fmt(r.latency_smoothed_ms, 0)} ms, over its ${fmt(r.loop_budget_ms, 0)} ms loop ` +
      `budget: it acts on stale motors. Lower the resolution (now R = ${state.resolution}), serve fewer robots ` +
      'or run the brain on a GPU.').join('\n');
  }
  function renderTable() {
    const body = document.querySelector('#robots tbody');
    body.textContent = '';
    if (!state.robots.length) {
      // Robots that cycled and left are not "yet to come": say what happened.
      const served = state.totals ? state.totals.robot_cycles : 0;
      body.innerHTML = '<tr class="empty"><td colspan="8"></td></tr>';
      body.querySelector('td').textContent = served > 0
        ? `no robot connected now: the robots have left (${count(served)} robot-cycles served since the server started)`
        : 'no robot connected yet';
      return;
    }
    for (const r of state.robots) {
      const tr = document.createElement('tr');
      tr.dataset.robot = r.key;
      tr.dataset.cycle = r.cycle;
      if (r.key === state.selected) tr.className = 'selected';
      const dims = r.sensory_dim ? `${r.sensory_dim}×${r.motor_dim}` : '–';
      const cells = [r.key, r.framing || '–', dims, count(r.cycle), fmt(r.rate, 1),
                     r.latency_ms === undefined ? '–' : fmt(r.latency_ms, 2), count(r.bad_frames)];
      cells.forEach((text, i) => {
        const td = document.createElement('td');
        td.textContent = text;
        if (i >= 3) td.className = 'num';
        if (i === 5 && r.over_budget) {
          td.className = 'num over-budget';
          td.title = `smoothed ${fmt(r.latency_smoothed_ms, 0)} ms > loop budget ${fmt(r.loop_budget_ms, 0)} ms`;
        }
        tr.appendChild(td);
      });
      const td = document.createElement('td');
      const badge = document.createElement('span');
      badge.className = 'state ' + r.state;
      badge.textContent = r.state;
      td.appendChild(badge);
      tr.appendChild(td);
      if (r.state !== 'refused') tr.onclick = () => select(r.key);
      body.appendChild(tr);
    }
  }
  function select(key) {
    if (key === state.selected) return;
    state.selected = key;
    state.series = null;  // a new robot starts a new plot
    state.field = null;
    $('plot-robot').textContent = key;
    sendSelection();
    renderTable();
  }

  // ---- plots (uPlot) ------------------------------------------------------------------------
  const axis = { stroke: '#7d8b99', grid: { stroke: '#222c38', width: 1 }, ticks: { stroke: '#263241' } };
  function plotWidth(id) { return Math.max(320, $(id).clientWidth || 600); }
  function makePlot(id, series, yRange) {
    $(id).textContent = '';
    const opts = {
      width: plotWidth(id), height: 200,
      scales: { x: { time: false }, y: yRange ? { range: yRange } : {} },
      // Cycles are whole numbers: no 12.5 ticks.
      axes: [Object.assign({ label: 'cycle', labelSize: 16, incrs: CYCLE_STEPS }, axis), axis],
      series: [{ label: 'cycle' }].concat(series),
      legend: { live: false },
      cursor: { drag: { x: false, y: false } },
    };
    const empty = [[]].concat(series.map(() => []));
    return new uPlot(opts, empty, $(id));
  }
  function ensurePlots(motorDim) {
    if (state.motorPlot && state.motorDim === motorDim) return;
    if (state.motorPlot) state.motorPlot.destroy();
    if (!state.signalPlot) {
      state.signalPlot = makePlot('signal-plot', [
        { label: 'reward', stroke: '#feca57', width: 1.5 },
        { label: 'confidence', stroke: '#3ecf8e', width: 1.5 },
        { label: 'novelty', stroke: '#f368e0', width: 1.5 },
      ]);
    }
    const series = [];
    for (let i = 0; i < motorDim; i++) {
      series.push({ label: 'm' + i, stroke: MOTOR_COLOURS[i % MOTOR_COLOURS.length], width: 1.5 });
    }
    state.motorPlot = makePlot('motor-plot', series, [-1, 1]);
    state.motorDim = motorDim;
  }
  function onTelemetry(msg) {
    if (msg.robot !== state.selected || !Array.isArray(msg.motors)) return;
    const m = msg.motors.length;
    if (!state.series || state.series.motors.length !== m) {
      state.series = { x: [], motors: Array.from({ length: m }, () => []), reward: [], confidence: [], novelty: [] };
    }
    const s = state.series;
    const last = s.x.length ? s.x[s.x.length - 1] : -Infinity;
    if (msg.cycle <= last) {  // the robot reconnected with an older brain: start over
      s.x.length = 0; s.reward.length = 0; s.confidence.length = 0; s.novelty.length = 0;
      s.motors.forEach((a) => { a.length = 0; });
    }
    s.x.push(msg.cycle);
    msg.motors.forEach((v, i) => s.motors[i].push(v));
    s.reward.push(msg.reward);
    s.confidence.push(msg.confidence);
    s.novelty.push(msg.novelty);
    if (s.x.length > WINDOW) {
      const cut = s.x.length - WINDOW;
      for (const a of [s.x, s.reward, s.confidence, s.novelty].concat(s.motors)) a.splice(0, cut);
    }
    ensurePlots(m);
    if (!state.drawQueued) {  // at most one redraw per frame, however fast points arrive
      state.drawQueued = true;
      requestAnimationFrame(draw);
    }
  }
  // The recent points of a robot just selected (the server keeps them while a browser is open).
  function onHistory(msg) {
    if (msg.robot !== state.selected || !Array.isArray(msg.points)) return;
    state.series = null;
    for (const p of msg.points) onTelemetry(p);
  }
  function draw() {
    state.drawQueued = false;
    const s = state.series;
    if (!s || !state.motorPlot) return;
    state.motorPlot.setData([s.x.slice()].concat(s.motors.map((a) => a.slice())));
    state.signalPlot.setData([s.x.slice(), s.reward.slice(), s.confidence.slice(), s.novelty.slice()]);
  }
  window.addEventListener('resize', () => {
    if (state.motorPlot) state.motorPlot.setSize({ width: plotWidth('motor-plot'), height: 200 });
    if (state.signalPlot) state.signalPlot.setSize({ width: plotWidth('signal-plot'), height: 200 });
  });

  // ---- heat map -----------------------------------------------------------------------------
  // uPlot draws series, not images; a field slice is R×R pixels put straight into a canvas.
  function setResolution(r) {
    state.resolution = r;
    const z = $('z');
    z.textContent = '';
    for (let i = 0; i < r; i++) z.add(new Option(String(i) + (i === Math.floor(r / 2) ? ' (middle)' : ''), i));
    z.value = state.z < 0 || state.z >= r ? Math.floor(r / 2) : state.z;
  }
  function fillChannels() {
    const names = { 62: ' (motor echo)', 63: ' (motor echo)', 0: ' (content)' };
    const c = $('channel');
    for (let i = 0; i < 64; i++) c.add(new Option(i + (names[i] || ''), i));
    c.onchange = () => { state.channel = Number(c.value); sendSelection(); };
    $('z').onchange = () => { state.z = Number($('z').value); sendSelection(); };
  }
  function colour(t) {  // t in [-1, 1]: blue, light grey at 0, red
    const lerp = (a, b, u) => Math.round(a + (b - a) * u);
    if (t < 0) { const u = -t; return [lerp(221, 59, u), lerp(221, 76, u), lerp(221, 192, u)]; }
    return [lerp(221, 180, t), lerp(221, 4, t), lerp(221, 38, t)];
  }
  // The colour scale: symmetric, +-(max |value| of the slice rounded up to 1, 2, 2.5 or 5 x
  // 10^k). scripts/plot_run.py uses the same rule and orientation, and matplotlib's "coolwarm"
  // (whose ends and middle colour() interpolates), so a slice looks the same in both.
  function niceScale(m) {
    if (!(m > 0)) return 1;
    const e = Math.pow(10, Math.floor(Math.log10(m)));
    for (const f of [1, 2, 2.5, 5, 10]) if (f * e >= m * (1 - 1e-9)) return f * e;
    return 10 * e;
  }
  function setAxes(r) {
    // Each tick at the centre of its cell: x from the left, y from the bottom (y grows upwards).
    const ticks = (el, side) => {
      el.textContent = '';
      for (const v of [0, Math.floor(r / 2), r - 1]) {
        const s = document.createElement('span');
        s.textContent = v;
        s.style[side] = `${(100 * (v + 0.5)) / r}%`;
        el.appendChild(s);
      }
    };
    ticks($('heat-x-ticks'), 'left');
    ticks($('heat-y-ticks'), 'bottom');
  }
  function onField(msg) {
    if (msg.robot !== state.selected) return;
    const r = msg.resolution, v = msg.values;
    if (!r || !Array.isArray(v) || v.length !== r * r) return;
    state.field = msg;
    let lo = Infinity, hi = -Infinity, sum = 0;
    for (const x of v) { if (x < lo) lo = x; if (x > hi) hi = x; sum += x; }
    const scale = niceScale(Math.max(Math.abs(lo), Math.abs(hi)));
    const canvas = $('heatmap');
    if (canvas.width !== r) { canvas.width = r; canvas.height = r; }
    if (state.axesFor !== r) { setAxes(r); state.axesFor = r; }
    const ctx = canvas.getContext('2d');
    const img = ctx.createImageData(r, r);
    // values[x * r + y] (field_slice: x first). Drawn as field_slices.png is: x to the right,
    // y upwards (canvas row 0 is the top, so y = r - 1 there).
    for (let x = 0; x < r; x++) {
      for (let y = 0; y < r; y++) {
        const [R, G, B] = colour(Math.max(-1, Math.min(1, v[x * r + y] / scale)));
        const p = 4 * ((r - 1 - y) * r + x);
        img.data[p] = R; img.data[p + 1] = G; img.data[p + 2] = B; img.data[p + 3] = 255;
      }
    }
    ctx.putImageData(img, 0, 0);
    $('field-caption').textContent = `${msg.robot} · channel ${msg.channel} · z ${msg.z} · ${r}×${r}`;
    $('legend-min').textContent = (-scale).toPrecision(3);
    $('legend-max').textContent = '+' + scale.toPrecision(3);
    $('slice-stats').textContent =
      `min ${lo.toPrecision(3)} · mean ${(sum / v.length).toPrecision(3)} · max ${hi.toPrecision(3)} · ` +
      `colour scale ±${scale} (max |value| rounded up)`;
  }

  // What the browser test reads (test/web/browser_test.py).
  window.fieldbrainMonitor = {
    robots: () => state.robots.map((r) => ({ key: r.key, cycle: r.cycle, state: r.state })),
    selected: () => state.selected,
    motorPoints: () => (state.motorPlot && state.motorPlot.data[0] ? state.motorPlot.data[0].length : 0),
    fieldShown: () => !!state.field,
    // The canvas pixel (x to the right, y upwards) of field cell (x, y), for orientation checks.
    fieldValue: (x, y) => (state.field ? state.field.values[x * state.field.resolution + y] : null),
    emptyText: () => { const td = document.querySelector('#robots tbody tr.empty td'); return td ? td.textContent : null; },
    // {key: cycle} of the first robots message this page got (a new page must not get a stale one).
    firstRobots: () => (state.firstRobots
      ? Object.fromEntries(state.firstRobots.filter((r) => r.state !== 'refused').map((r) => [r.key, r.cycle]))
      : null),
  };

  fillChannels();
  connect();
})();
