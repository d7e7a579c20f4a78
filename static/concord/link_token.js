// A link's secret travels in the URL fragment, which browsers never send to the server (so it is in no
// access log and no Referer). This moves it into the page's form, takes it out of the address bar and
// sends it by POST; without scripts the person pastes it into the same form.
(function () {
  "use strict";
  const form = document.querySelector("form[data-link-token]");
  const secret = decodeURIComponent(window.location.hash.slice(1));
  if (!form || !secret) return;
  history.replaceState(null, "", window.location.pathname + window.location.search);
  form.elements.token.value = secret;
  form.submit();
})();
