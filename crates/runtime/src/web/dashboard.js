// The dashboard's plots, drawn as SVG by this script alone (shipped in the binary: no CDN,
// no npm, no build). It polls the JSON routes with the page's token cookie:
//   /api/cluster/task_stream?since=T   the task stream, incrementally (T = the last `now`)
//   /api/cluster/memory_history        memory over time per worker
//   /api/session, .../task, .../graph  the progress panel and the graph of a small task
// A window holding more bars in a row than the row has pixels is drawn aggregated: one
// rect per run of pixel columns, coloured by the family that kept the slot busiest there,
// its opacity the share of time busy. So 10^6 subtasks cost at most rows x width rects.
(function () {
  "use strict";
  var NS = "http://www.w3.org/2000/svg";
  var FAMILIES = ["creation", "elementwise", "reduction", "manipulation", "linalg",
    "shuffle", "io", "graph"];
  var COLORS = ["#4c78a8", "#72b7b2", "#f58518", "#b279a2", "#54a24b", "#e4b400",
    "#9d755d", "#bab0ac"];
  var FAILED = "#d62728";
  var KEPT = 200000;        // runs this page keeps (the oldest go first)
  var GRAPH_MAX = 150;      // subtasks up to which a task's graph is drawn
  var WINDOWS = [["10 s", 10], ["1 min", 60], ["5 min", 300], ["all", Infinity]];

  var runs = [];            // task-stream entries, in arrival order
  var since = null;         // `now` of the last answer
  var now = 0;              // the supervisor's clock at the last answer
  var meta = null;          // the last answer's counters
  var view = { span: 60, end: null }; // end null: follow the present

  function $(id) { return document.getElementById(id); }
  function svgEl(tag, attrs, parent) {
    var e = document.createElementNS(NS, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function text(parent, x, y, s, attrs) {
    var t = svgEl("text", Object.assign({ x: x, y: y, "font-size": 10 }, attrs || {}), parent);
    t.textContent = s;
    return t;
  }
  function familyIndex(f) { var i = FAMILIES.indexOf(f); return i < 0 ? FAMILIES.length - 1 : i; }
  function colorOf(e) { return e.status === "succeeded" ? COLORS[familyIndex(e.family)] : FAILED; }
  function human(n) {
    var u = ["B", "KB", "MB", "GB", "TB"], i = 0;
    while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
    return (i ? n.toFixed(1) : n) + " " + u[i];
  }
  function getJSON(url) {
    return fetch(url, { credentials: "same-origin" }).then(function (r) {
      if (!r.ok) throw new Error(url + ": HTTP " + r.status);
      return r.json();
    });
  }
  function widthOf(el) { return Math.max(400, Math.min(1400, (el && el.clientWidth) || 900)); }
  function rowKey(e) { return e.worker + "/" + e.slot; }
  function byWorkerThenSlot(a, b) {
    var pa = a.split("/"), pb = b.split("/");
    var wa = parseInt(pa[0].replace(/\D/g, ""), 10), wb = parseInt(pb[0].replace(/\D/g, ""), 10);
    return wa - wb || (+pa[1]) - (+pb[1]);
  }

  // ------------------------------------------------------------------ task stream
  function pollStream() {
    var url = "/api/cluster/task_stream" + (since === null ? "?limit=" + KEPT : "?since=" + since);
    return getJSON(url).then(function (d) {
      since = d.now; now = d.now; meta = d;
      for (var i = 0; i < d.entries.length; i++) {
        var e = d.entries[i];
        runs.push(e);
      }
      if (runs.length > KEPT) runs.splice(0, runs.length - KEPT);
      drawStream();
    });
  }

  function windowBounds() {
    var t1 = view.end === null ? now : view.end;
    var t0 = t1 - view.span;
    if (!isFinite(view.span)) {
      t0 = t1;
      for (var i = 0; i < runs.length; i++) t0 = Math.min(t0, runs[i].start);
      if (t0 >= t1) t0 = t1 - 1;
    }
    return [t0, t1];
  }

  function drawStream() {
    var box = $("task-stream");
    if (!box) return;
    var W = widthOf(box), L = 70, P = W - L - 10, ROW = 14;
    var b = windowBounds(), t0 = b[0], t1 = b[1], dt = t1 - t0;
    var rows = {}, keys = [];
    for (var i = 0; i < runs.length; i++) {
      var k = rowKey(runs[i]);
      if (!(k in rows)) { rows[k] = []; keys.push(k); }
      var e = runs[i];
      if (e.end >= t0 && e.start <= t1) rows[k].push(e);
    }
    keys.sort(byWorkerThenSlot);
    var H = Math.max(1, keys.length) * ROW + 24;
    var svg = svgEl("svg", { width: W, height: H, id: "task-stream-svg", "data-rows": keys.length });
    var shown = 0, aggregated = 0;
    keys.forEach(function (k, r) {
      var y = r * ROW + 2, list = rows[k];
      text(svg, 2, y + 10, k);
      svgEl("line", { x1: L, x2: L + P, y1: y + ROW - 1, y2: y + ROW - 1, stroke: "#eee" }, svg);
      if (list.length > P / 2) {
        aggregated += drawAggregated(svg, list, t0, dt, L, P, y, ROW - 3);
      } else {
        list.forEach(function (e) {
          var x0 = L + Math.max(0, (e.start - t0) / dt) * P;
          var x1 = L + Math.min(1, (e.end - t0) / dt) * P;
          var rect = svgEl("rect", {
            "class": "bar", x: x0.toFixed(1), y: y, width: Math.max(1, x1 - x0).toFixed(1),
            height: ROW - 3, fill: colorOf(e), "data-task": e.task, "data-subtask": e.subtask,
            "data-status": e.status
          }, svg);
          svgEl("title", {}, rect).textContent = e.op + " (" + e.family + ") task " + e.task +
            " subtask " + e.subtask + ", " + ((e.end - e.start) * 1000).toFixed(2) + " ms, " +
            human(e.bytes_in) + " in, " + human(e.bytes_out) + " out" +
            (e.fetch > 0 ? ", fetched " + (e.fetch * 1000).toFixed(1) + " ms" : "") +
            (e.status !== "succeeded" ? ", " + e.status : "");
        });
      }
      shown += list.length;
    });
    // The time axis: seconds before the window's end.
    var axisY = keys.length * ROW + 14;
    for (var j = 0; j <= 5; j++) {
      var x = L + P * j / 5, ago = dt * (1 - j / 5);
      svgEl("line", { x1: x, x2: x, y1: 0, y2: axisY - 8, stroke: "#f3f3f3" }, svg);
      text(svg, x - 12, axisY, ago === 0 ? (view.end === null ? "now" : "end") : "-" + ago.toFixed(ago < 10 ? 1 : 0) + " s");
    }
    brush(svg, L, P, t0, dt, H);
    box.replaceChildren(svg);
    var info = $("task-stream-info");
    if (info && meta) {
      info.textContent = shown + " runs in the window" + (aggregated ? " (" + aggregated + " aggregated rects)" : "") +
        "; the supervisor's ring holds " + Math.min(meta.recorded, meta.capacity) + " of " + meta.capacity +
        " (" + meta.recorded + " recorded, " + meta.overwritten + " overwritten" +
        (meta.dropped_by_workers ? ", " + meta.dropped_by_workers + " dropped by workers" : "") + ")" +
        (view.end === null ? "" : " · zoomed: double-click to follow the present");
    }
  }

  // Many runs on one row: per pixel column, the busy time per family (failures apart).
  function drawAggregated(svg, list, t0, dt, L, P, y, h) {
    var NF = FAMILIES.length + 1, busy = new Float64Array(P * NF), col = dt / P;
    list.forEach(function (e) {
      var f = e.status === "succeeded" ? familyIndex(e.family) : NF - 1;
      var a = Math.max(e.start, t0), z = Math.min(e.end, t0 + dt);
      var c0 = Math.max(0, Math.floor((a - t0) / col)), c1 = Math.min(P - 1, Math.floor((z - t0) / col));
      for (var c = c0; c <= c1; c++) {
        var s = Math.max(a, t0 + c * col), u = Math.min(z, t0 + (c + 1) * col);
        busy[c * NF + f] += Math.max(u - s, col * 0.02);
      }
    });
    var rects = 0, start = -1, key = "";
    function flush(end) {
      if (start < 0) return;
      var p = key.split("|");
      svgEl("rect", { "class": "bar agg", x: L + start, y: y, width: end - start, height: h,
        fill: p[0], "fill-opacity": p[1] }, svg);
      rects++;
    }
    for (var c = 0; c <= P; c++) {
      var k = "";
      if (c < P) {
        var total = 0, best = -1, bestF = 0;
        for (var f = 0; f < NF; f++) {
          var v = busy[c * NF + f];
          total += v;
          if (v > best) { best = v; bestF = f; }
        }
        if (busy[c * NF + NF - 1] > 0) bestF = NF - 1;
        if (total > 0) {
          var share = Math.min(1, total / col);
          k = (bestF === NF - 1 ? FAILED : COLORS[bestF]) + "|" + (0.25 + 0.75 * Math.ceil(share * 4) / 4).toFixed(2);
        }
      }
      if (k !== key) { flush(c); start = k ? c : -1; key = k; }
    }
    return rects;
  }

  // Drag across the plot to zoom into that time range; double-click to follow the present.
  function brush(svg, L, P, t0, dt, H) {
    var from = null, sel = null;
    function tAt(ev) {
      var r = svg.getBoundingClientRect();
      return t0 + Math.max(0, Math.min(1, (ev.clientX - r.left - L) / P)) * dt;
    }
    svg.addEventListener("mousedown", function (ev) {
      from = tAt(ev);
      sel = svgEl("rect", { x: ev.clientX - svg.getBoundingClientRect().left, y: 0, width: 0, height: H, fill: "rgba(0,0,0,.08)" }, svg);
    });
    svg.addEventListener("mousemove", function (ev) {
      if (from === null) return;
      var x0 = L + (from - t0) / dt * P, x1 = L + (tAt(ev) - t0) / dt * P;
      sel.setAttribute("x", Math.min(x0, x1)); sel.setAttribute("width", Math.abs(x1 - x0));
    });
    svg.addEventListener("mouseup", function (ev) {
      if (from === null) return;
      var to = tAt(ev), a = Math.min(from, to), z = Math.max(from, to);
      from = null;
      if (z - a > dt / 500) { view.end = z; view.span = z - a; }
      drawStream();
    });
    svg.addEventListener("dblclick", function () { view.end = null; view.span = 60; drawStream(); });
  }

  function windowButtons() {
    var box = $("task-stream-windows");
    if (!box) return;
    WINDOWS.forEach(function (w) {
      var b = document.createElement("button");
      b.textContent = w[0];
      b.addEventListener("click", function () { view.span = w[1]; view.end = null; drawStream(); });
      box.appendChild(b);
    });
    var legend = document.createElement("span");
    legend.className = "legend";
    FAMILIES.concat(["failed"]).forEach(function (f, i) {
      var s = document.createElement("span");
      s.innerHTML = "<i style=\"background:" + (COLORS[i] || FAILED) + "\"></i>" + f;
      legend.appendChild(s);
    });
    box.appendChild(legend);
  }

  // ------------------------------------------------------------------ memory
  function pollMemory() {
    return getJSON("/api/cluster/memory_history").then(function (d) {
      var box = $("memory");
      if (!box) return;
      var parts = d.workers.map(function (w) { return memoryPlot(w, d.now); });
      if (!parts.length) {
        var p = document.createElement("p");
        p.textContent = "no worker has sent a heartbeat yet";
        parts = [p];
      }
      box.replaceChildren.apply(box, parts);
    });
  }

  function memoryPlot(w, tNow) {
    var W = 440, H = 130, L = 60, P = W - L - 10, top = 14, PH = H - top - 20;
    var n = w.times.length, t0 = n ? Math.min(w.times[0], tNow - 60) : tNow - 60, dt = Math.max(1e-3, tNow - t0);
    var used = w.memory.map(function (m, i) { return m + w.unmanaged[i]; });
    var peak = Math.max.apply(null, [1, w.limit].concat(used, w.spilled, w.memory.map(function (m, i) { return m + w.reserved[i]; })));
    var ymax = peak * 1.08;
    function X(t) { return (L + (t - t0) / dt * P).toFixed(1); }
    function Y(v) { return (top + PH - v / ymax * PH).toFixed(1); }
    var svg = svgEl("svg", { width: W, height: H, "class": "memory", "data-worker": w.worker });
    text(svg, 2, 10, w.worker + ": " + human(n ? w.memory[n - 1] : 0) + " in memory, " +
      human(n ? w.spilled[n - 1] : 0) + " spilled, " + human(n ? w.unmanaged[n - 1] : 0) + " unmanaged" +
      (w.limit ? " · limit " + human(w.limit) : " · no limit"), { "font-weight": "bold" });
    [0, 0.5, 1].forEach(function (f) { text(svg, 2, +Y(ymax * f) + 3, human(Math.round(ymax * f))); });
    function hline(v, color, label, dash) {
      if (!v) return;
      svgEl("line", { "class": "threshold " + label, x1: L, x2: L + P, y1: Y(v), y2: Y(v), stroke: color, "stroke-dasharray": dash || "" }, svg);
      text(svg, L + P - 40, +Y(v) - 2, label, { fill: color });
    }
    hline(w.limit, "#d62728", "limit");
    hline(w.pause_at, "#f58518", "pause", "4 3");
    hline(w.spill_at, "#e4b400", "spill", "2 3");
    function line(values, cls, color, dash) {
      var pts = values.map(function (v, i) { return X(w.times[i]) + "," + Y(v); }).join(" ");
      svgEl("polyline", { "class": cls, points: pts, fill: "none", stroke: color, "stroke-width": 1.5, "stroke-dasharray": dash || "" }, svg);
    }
    line(used, "mem mem-total", "#9ecae1");
    line(w.memory, "mem mem-managed", "#3182bd");
    line(w.spilled, "mem mem-spilled", "#756bb1", "3 2");
    svgEl("line", { x1: L, x2: L + P, y1: top + PH, y2: top + PH, stroke: "#999" }, svg);
    text(svg, L, H - 4, "-" + dt.toFixed(0) + " s");
    text(svg, L + P - 20, H - 4, "now");
    return svg;
  }

  // ------------------------------------------------------------------ progress and graph
  var lastSmall = null; // {sid, tid}: the newest small task seen, drawn as a graph

  function pollProgress() {
    return getJSON("/api/session").then(function (d) {
      return Promise.all(d.sessions.map(function (s) {
        return getJSON("/api/session/" + encodeURIComponent(s.session) + "/task").then(function (t) {
          return t.tasks.map(function (x) { return { sid: s.session, info: x }; });
        });
      }));
    }).then(function (lists) {
      var all = [].concat.apply([], lists);
      var running = all.filter(function (t) { return t.info.status === "running" || t.info.status === "pending"; }).slice(0, 8);
      // The newest small task whose graph is still held, running ones first.
      var small = all.filter(function (t) {
        return t.info.subtasks > 0 && t.info.subtasks <= GRAPH_MAX && t.info.status !== "cancelled";
      });
      if (small.length) {
        small.sort(function (a, b) {
          return (b.info.status === "running") - (a.info.status === "running") || b.info.task - a.info.task;
        });
        lastSmall = small[0];
      }
      return Promise.all(running.map(function (t) {
        return getJSON("/api/session/" + encodeURIComponent(t.sid) + "/task/" + t.info.task + "/graph?limit=0")
          .then(function (g) { return { t: t, g: g }; });
      }));
    }).then(function (views) {
      var box = $("progress");
      if (box) {
        var parts = views.map(progressPanel);
        if (!parts.length) { var p = document.createElement("p"); p.textContent = "no task is running"; parts = [p]; }
        box.replaceChildren.apply(box, parts);
      }
      if (lastSmall) {
        return getJSON("/api/session/" + encodeURIComponent(lastSmall.sid) + "/task/" + lastSmall.info.task + "/graph?limit=" + GRAPH_MAX)
          .then(function (g) { drawGraph(lastSmall, g); });
      }
    });
  }

  // A task's progress by op kind, as dask's progress bars group tasks by their key's
  // prefix: a row per op a subtask is drawn as (its last chunk's), with a swatch of its
  // family's colour and done / submitted / waiting parts.
  function progressPanel(v) {
    var t = v.t, g = v.g, div = document.createElement("div");
    div.className = "task-progress";
    var h = document.createElement("h3");
    h.textContent = "task " + t.info.task + " (" + t.sid + "): " + (t.info.progress * 100).toFixed(1) + "% of " + g.subtasks_total + " subtasks";
    div.appendChild(h);
    var rows = g.by_op || [];
    var W = 640, ROW = 16, svg = svgEl("svg", { width: W, height: Math.max(1, rows.length) * ROW + 4, "class": "progress" });
    rows.forEach(function (r, i) {
      var total = Math.max(1, r.waiting + r.submitted + r.done);
      var y = i * ROW + 2, x = 200, P = W - x - 120;
      var row = svgEl("g", { "class": "op-progress", "data-op": r.op, "data-task": t.info.task }, svg);
      svgEl("rect", { x: 2, y: y + 1, width: 10, height: ROW - 6, fill: COLORS[familyIndex(r.family)] }, row);
      text(row, 16, y + 11, r.op + " (" + r.family + ")");
      [[r.done, "#3a3"], [r.submitted, "#f0a020"], [r.waiting, "#ddd"]].reduce(function (at, part) {
        var w = part[0] / total * P;
        if (w > 0) svgEl("rect", { x: at.toFixed(1), y: y, width: Math.max(1, w).toFixed(1), height: ROW - 4, fill: part[1] }, row);
        return at + w;
      }, x);
      text(row, x + P + 6, y + 11, r.done + " / " + total);
    });
    div.appendChild(svg);
    return div;
  }

  // The chunk graph of a small task: a layer per chunk depth (longest path from a source),
  // a node per chunk coloured by its op's family, faded until its subtask is done, an
  // arrow per input. Tasks too large for chunks fall back to their subtasks.
  function drawGraph(t, g) {
    var box = $("graph");
    if (!box || !g.subtasks.length) return;
    var chunks = g.chunks && g.chunks.length;
    var nodes = chunks ? g.chunks : g.subtasks;
    var inputsOf = function (n) { return (chunks ? n.inputs : n.preds) || []; };
    var depth = [];
    nodes.forEach(function (n, i) {
      depth[i] = chunks ? inputsOf(n).reduce(function (d, p) { return Math.max(d, depth[p] + 1); }, 0) : n.depth;
    });
    var layers = {};
    nodes.forEach(function (n, i) { (layers[depth[i]] = layers[depth[i]] || []).push(i); });
    var depths = Object.keys(layers).map(Number).sort(function (a, b) { return a - b; });
    var widest = Math.max.apply(null, [1].concat(depths.map(function (d) { return layers[d].length; })));
    var NW = 58, NH = 22, GX = 12, GY = 40;
    var W = Math.min(1400, widest * (NW + GX) + 20), H = depths.length * (NH + GY) + 20;
    var pos = {};
    depths.forEach(function (d, li) {
      var row = layers[d], step = Math.min(NW + GX, (W - 20) / row.length);
      row.forEach(function (i, k) { pos[i] = [10 + k * step, 10 + li * (NH + GY)]; });
    });
    var svg = svgEl("svg", { width: W, height: H, id: "graph-svg", "data-task": t.info.task, "data-nodes": chunks ? "chunks" : "subtasks" });
    var defs = svgEl("defs", {}, svg), m = svgEl("marker", { id: "arrow", viewBox: "0 0 6 6", refX: 6, refY: 3, markerWidth: 6, markerHeight: 6, orient: "auto" }, defs);
    svgEl("path", { d: "M0,0 L6,3 L0,6 z", fill: "#888" }, m);
    var nodeW = Math.min(NW, (W - 20) / widest - 4);
    nodes.forEach(function (n, i) {
      inputsOf(n).forEach(function (p) {
        if (!(p in pos)) return;
        svgEl("line", { "class": "edge", x1: pos[p][0] + nodeW / 2, y1: pos[p][1] + NH, x2: pos[i][0] + nodeW / 2, y2: pos[i][1], stroke: "#aaa", "marker-end": "url(#arrow)" }, svg);
      });
    });
    var fill = { waiting: "#ddd", ready: "#ccc", submitted: "#f0a020", done: "#3a3" };
    nodes.forEach(function (n, i) {
      var node = svgEl("g", { "class": chunks ? "node chunk" : "node", transform: "translate(" + pos[i][0].toFixed(1) + "," + pos[i][1] + ")" }, svg);
      var label, title;
      if (chunks) {
        var s = g.subtasks[n.subtask] || {};
        svgEl("rect", { width: nodeW.toFixed(1), height: NH, rx: 3, fill: COLORS[familyIndex(n.family)], "fill-opacity": s.state === "done" ? 1 : 0.35, stroke: s.state === "submitted" ? "#f0a020" : "#666", "stroke-width": s.state === "submitted" ? 2 : 1 }, node);
        label = n.op;
        title = n.label + " (" + n.shape.join(", ") + ") in subtask " + n.subtask + ", " + (s.state || "?") + (s.worker ? " on " + s.worker : "");
      } else {
        svgEl("rect", { width: nodeW.toFixed(1), height: NH, rx: 3, fill: fill[n.state] || "#ddd", stroke: "#666" }, node);
        label = "s" + i;
        title = "subtask " + i + " " + n.id + " depth " + n.depth + ", " + n.chunks + " chunks, " + n.state + (n.worker ? " on " + n.worker : "");
      }
      text(node, 3, 14, label.length > 9 ? label.slice(0, 8) + "…" : label);
      svgEl("title", {}, node).textContent = title;
    });
    var cap = $("graph-info");
    if (cap) cap.textContent = "task " + t.info.task + " (" + t.sid + "), " + (chunks ? g.chunks.length + " chunks in " : "") + g.subtasks_total + " subtasks, " + g.info.status;
    box.replaceChildren(svg);
  }

  // ------------------------------------------------------------------ the tables
  function pollTables() {
    return fetch(location.pathname + location.search, { credentials: "same-origin" })
      .then(function (r) { return r.text(); })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.getElementById("tables"), box = $("tables");
        if (fresh && box) box.innerHTML = fresh.innerHTML;
      });
  }

  function every(ms, f) {
    function run() {
      Promise.resolve().then(f).catch(function (e) {
        var s = $("errors");
        if (s) s.textContent = String(e);
      }).then(function () { setTimeout(run, ms); });
    }
    run();
  }

  windowButtons();
  every(1000, pollStream);
  every(2000, pollMemory);
  every(2000, pollProgress);
  every(2000, pollTables);
})();
