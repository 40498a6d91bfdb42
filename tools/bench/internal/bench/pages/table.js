for (const btn of document.querySelectorAll('button[data-k]'))
  btn.addEventListener('click', () => {
    const k = +btn.dataset.k, body = document.querySelector('#t tbody');
    const rows = [...body.rows].sort((a, b) => a.cells[k].textContent.localeCompare(b.cells[k].textContent, undefined, {numeric: true}));
    body.replaceChildren(...rows);
  });
