let n = 0;
document.getElementById('items').addEventListener('click', e => {
  if (e.target.tagName !== 'BUTTON') return;
  n++;
  e.target.textContent = 'Added ' + e.target.dataset.id;
  document.getElementById('cart').textContent = 'Cart: ' + n + ' items';
});
