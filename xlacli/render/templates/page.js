"use strict";
(function () {
  function sortValue(cell, numeric) {
    var raw = cell.getAttribute("data-sort");
    if (raw === null) { raw = cell.textContent; }
    return numeric ? parseFloat(raw) : raw.toLowerCase();
  }
  function sortBy(table, header) {
    var headers = Array.prototype.slice.call(table.tHead.rows[0].cells);
    var column = headers.indexOf(header);
    var numeric = header.getAttribute("data-type") === "number";
    var ascending = header.getAttribute("aria-sort") !== "ascending";
    if (numeric && !header.hasAttribute("aria-sort")) { ascending = false; }
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = sortValue(a.cells[column], numeric), y = sortValue(b.cells[column], numeric);
      var order = x < y ? -1 : x > y ? 1 : 0;
      return ascending ? order : -order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
    headers.forEach(function (h) { h.removeAttribute("aria-sort"); });
    header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    table.querySelectorAll("thead th").forEach(function (header) {
      var button = header.querySelector("button");
      if (button) { button.addEventListener("click", function () { sortBy(table, header); }); }
    });
  });

  function escapeHtml(text) {
    return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }
  function search(block, query) {
    var pre = block.querySelector("pre.code");
    if (!pre.hasAttribute("data-original")) { pre.setAttribute("data-original", pre.innerHTML); }
    var output = block.querySelector(".search output");
    if (!query) { pre.innerHTML = pre.getAttribute("data-original"); output.textContent = ""; return; }
    var needle = query.toLowerCase(), hits = 0;
    var lines = pre.textContent.split("\n").map(function (line) {
      if (line.toLowerCase().indexOf(needle) < 0) { return escapeHtml(line); }
      hits += 1;
      return "<mark>" + escapeHtml(line) + "</mark>";
    });
    pre.innerHTML = lines.join("\n");
    output.textContent = hits + (hits === 1 ? " matching line" : " matching lines");
    var first = pre.querySelector("mark");
    if (first) { pre.scrollTop = first.offsetTop - pre.offsetTop - 40; }
  }
  document.querySelectorAll(".code-block").forEach(function (block) {
    var box = block.querySelector(".search");
    if (!box) { return; }
    box.hidden = false;
    var input = box.querySelector("input");
    var timer = null;
    input.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(function () { search(block, input.value); }, 120);
    });
  });
})();
