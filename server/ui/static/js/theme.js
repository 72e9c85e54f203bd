// Applies the saved color theme before the page paints. Loaded as a
// classic script in <head>: the CSP allows no inline scripts.
(function () {
  try {
    var t = localStorage.getItem('backtrail.theme');
    if (t === 'light' || t === 'dark') document.documentElement.setAttribute('data-theme', t);
  } catch (e) { /* storage disabled */ }
})();
