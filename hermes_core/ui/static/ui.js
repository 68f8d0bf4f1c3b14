// hermes ui: the little JavaScript the pages need (no inline script: the CSP forbids it).
document.addEventListener("DOMContentLoaded", function () {
  var picker = document.getElementById("user-picker");
  if (picker) {
    picker.addEventListener("change", function () {
      var url = new URL(window.location.href);
      url.searchParams.set("u", picker.value);
      url.searchParams.delete("msg");
      url.searchParams.delete("ok");
      window.location.href = url.toString();
    });
  }
  document.querySelectorAll("form[data-confirm]").forEach(function (form) {
    form.addEventListener("submit", function (event) {
      if (!window.confirm(form.getAttribute("data-confirm"))) { event.preventDefault(); }
    });
  });
});
