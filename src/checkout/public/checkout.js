/* The payment-link page: each field is checked here and what to fix is shown next to it; the
   card data is encrypted here, in the browser, under the merchant's encryption key (RSA PKCS#1
   v1.5, the same procedure as the merchant SDK), before it leaves the page. The server checks
   everything again. */
(function () {
  'use strict';
  var form = document.getElementById('pay-form');
  if (!form) return;
  var error = document.getElementById('pay-error');
  var cardFields = document.getElementById('card-fields');
  var paypalFields = document.getElementById('paypal-fields');
  var cardNumber = document.getElementById('cardNumber');
  var expiry = document.getElementById('expiry');
  var cvv = document.getElementById('cvv');
  var brandBadge = document.getElementById('card-brand');

  /* Brands by their number's start (IIN ranges), with how the number is grouped. */
  var BRANDS = [
    { id: 'amex', name: 'American Express', pattern: /^3[47]/, groups: [4, 6, 5], lengths: [15], cvv: 4 },
    { id: 'verve', name: 'Verve', pattern: /^(506(0|1)|507[89]|6500)/, groups: [4, 4, 4, 4, 3], lengths: [16, 18, 19], cvv: 3 },
    { id: 'visa', name: 'Visa', pattern: /^4/, groups: [4, 4, 4, 4, 3], lengths: [13, 16, 19], cvv: 3 },
    { id: 'mastercard', name: 'Mastercard', pattern: /^(5[1-5]|2(2[2-9]|[3-6]\d|7[01]|720))/, groups: [4, 4, 4, 4], lengths: [16], cvv: 3 },
    { id: 'discover', name: 'Discover', pattern: /^(6011|65|64[4-9])/, groups: [4, 4, 4, 4, 3], lengths: [16, 19], cvv: 3 },
  ];
  var DEFAULT_GROUPS = [4, 4, 4, 4, 3];

  function brandOf(digits) {
    for (var i = 0; i < BRANDS.length; i++) if (BRANDS[i].pattern.test(digits)) return BRANDS[i];
    return null;
  }
  function group(digits, groups) {
    var parts = [];
    var at = 0;
    for (var i = 0; i < groups.length && at < digits.length; i++) {
      parts.push(digits.slice(at, at + groups[i]));
      at += groups[i];
    }
    return parts.join(' ');
  }
  function luhn(digits) {
    var sum = 0;
    for (var i = 0; i < digits.length; i++) {
      var d = Number(digits.charAt(digits.length - 1 - i));
      if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
      sum += d;
    }
    return sum % 10 === 0;
  }
  /* Reformats the field, keeping the caret after the same digit. */
  function reformat(input, format) {
    var caret = input.selectionStart === null ? input.value.length : input.selectionStart;
    var digitsBefore = input.value.slice(0, caret).replace(/\D/g, '').length;
    var next = format(input.value);
    input.value = next;
    var pos = 0;
    for (var seen = 0; pos < next.length && seen < digitsBefore; pos++) if (/\d/.test(next.charAt(pos))) seen++;
    if (document.activeElement === input) input.setSelectionRange(pos, pos);
  }

  function cardDigits() {
    return cardNumber.value.replace(/\D/g, '');
  }
  function showBrand() {
    var brand = brandOf(cardDigits());
    brandBadge.textContent = brand ? brand.name : '';
    brandBadge.dataset.brand = brand ? brand.id : '';
    cvv.maxLength = brand ? brand.cvv : 4;
  }
  cardNumber.addEventListener('input', function () {
    reformat(cardNumber, function (value) {
      var digits = value.replace(/\D/g, '').slice(0, 19);
      var brand = brandOf(digits);
      return group(digits, brand ? brand.groups : DEFAULT_GROUPS);
    });
    showBrand();
  });

  /* "MM / YY": a lone first digit above 1 is a month (5 → 05); a filled "12/2030" becomes "12 / 30". */
  function formatExpiry(value) {
    var full = /^\s*(\d{1,2})\s*\/\s*(\d{4})\s*$/.exec(value);
    if (full) value = full[1] + full[2].slice(2);
    var digits = value.replace(/\D/g, '');
    if (/^[2-9]/.test(digits)) digits = '0' + digits;
    digits = digits.slice(0, 4);
    return digits.length > 2 ? digits.slice(0, 2) + ' / ' + digits.slice(2) : digits;
  }
  expiry.addEventListener('input', function (event) {
    if (event.inputType && event.inputType.indexOf('delete') === 0) return;
    reformat(expiry, formatExpiry);
  });
  cvv.addEventListener('input', function () {
    cvv.value = cvv.value.replace(/\D/g, '');
  });

  function selectedOption() {
    var checked = form.querySelector('input[name="paymentOption"]:checked');
    return checked ? checked.value : 'C';
  }
  function toggle() {
    var card = selectedOption() === 'C';
    cardFields.hidden = !card;
    paypalFields.hidden = card;
    Array.prototype.forEach.call(cardFields.querySelectorAll('input'), function (i) {
      i.required = card && i.dataset.required === 'true';
    });
  }
  Array.prototype.forEach.call(form.querySelectorAll('input[name="paymentOption"]'), function (r) {
    r.addEventListener('change', toggle);
  });
  toggle();

  function value(id) {
    var el = document.getElementById(id);
    return el ? String(el.value).trim() : '';
  }
  function setError(id, message) {
    var el = document.getElementById(id);
    var line = document.getElementById(id + '-error');
    if (!el || !line) return false;
    line.textContent = message || '';
    if (message) el.setAttribute('aria-invalid', 'true');
    else el.removeAttribute('aria-invalid');
    return true;
  }
  Array.prototype.forEach.call(form.querySelectorAll('input, select'), function (el) {
    el.addEventListener('input', function () {
      if (el.getAttribute('aria-invalid') === 'true') setError(el.id, '');
    });
  });

  function parsedExpiry() {
    var m = /^(\d{2}) \/ (\d{2})$/.exec(formatExpiry(expiry.value));
    return m ? { month: m[1], year: m[2] } : null;
  }

  /* Each field's problem in the customer's words, or '' when it is fine. */
  function problems(option) {
    var found = {};
    var amount = document.getElementById('amount');
    if (amount) {
      if (!value('amount')) found.amount = 'Enter the amount to pay';
      else if (!/^\d+(\.\d{1,2})?$/.test(value('amount')) || Number(value('amount')) <= 0) found.amount = 'Check the amount';
    }
    if (!value('firstname')) found.firstname = 'Enter your first name';
    if (!value('lastname')) found.lastname = 'Enter your last name';
    if (!value('email')) found.email = 'Enter your e-mail address';
    else if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value('email'))) found.email = 'Check the e-mail address';
    if (!value('mobile')) found.mobile = 'Enter your mobile number';
    else if (!/^\+?[\d\s()-]{7,20}$/.test(value('mobile'))) found.mobile = 'Check the mobile number';
    if (option === 'C') {
      var digits = cardDigits();
      var brand = brandOf(digits);
      if (!digits) found.cardNumber = 'Enter the card number';
      else if (digits.length < 12 || digits.length > 19 || !luhn(digits) || (brand && brand.lengths.indexOf(digits.length) < 0))
        found.cardNumber = 'Check the card number';
      var exp = parsedExpiry();
      if (!value('expiry')) found.expiry = 'Enter the expiry date';
      else if (!exp || Number(exp.month) < 1 || Number(exp.month) > 12) found.expiry = 'Check the expiry date: month / year, like 08 / 27';
      else {
        var now = new Date();
        var firstAfter = new Date(Date.UTC(2000 + Number(exp.year), Number(exp.month), 1));
        if (firstAfter.getTime() <= now.getTime()) found.expiry = 'This card has expired';
      }
      var cvvLength = brand ? brand.cvv : null;
      if (!value('cvv')) found.cvv = 'Enter the security code';
      else if (!/^\d{3,4}$/.test(value('cvv')) || (cvvLength && value('cvv').length !== cvvLength))
        found.cvv =
          cvvLength === 4 ? 'Check the security code: 4 digits on the front of the card' : 'Check the security code: 3 digits on the back of the card';
    }
    if (!value('street')) found.street = 'Enter the street of your billing address';
    if (!value('city')) found.city = 'Enter the city of your billing address';
    return found;
  }

  /* The server's refusal, next to the field it is about when it names one. */
  var SERVER_FIELDS = [
    [/card ?number/i, 'cardNumber', 'Check the card number'],
    [/expir/i, 'expiry', 'Check the expiry date'],
    [/cvv/i, 'cvv', 'Check the security code'],
    [/e-?mail/i, 'email', 'Check the e-mail address'],
    [/mobile/i, 'mobile', 'Check the mobile number'],
  ];
  function showServerError(message) {
    for (var i = 0; i < SERVER_FIELDS.length; i++) {
      if (SERVER_FIELDS[i][0].test(message) && setError(SERVER_FIELDS[i][1], /expired/i.test(message) ? 'This card has expired' : SERVER_FIELDS[i][2])) {
        document.getElementById(SERVER_FIELDS[i][1]).focus();
        return;
      }
    }
    error.textContent = message;
  }

  form.addEventListener('submit', function (event) {
    event.preventDefault();
    error.textContent = '';
    var option = selectedOption();
    var found = problems(option);
    var first = null;
    Array.prototype.forEach.call(form.querySelectorAll('[data-error-for]'), function (line) {
      var id = line.dataset.errorFor;
      setError(id, found[id] || '');
      if (found[id] && !first) first = document.getElementById(id);
    });
    if (first) {
      first.focus();
      return;
    }
    var button = form.querySelector('button[type="submit"]');
    button.disabled = true;
    var billing = { street: value('street'), city: value('city'), state: value('state'), country: value('billingCountry'), zipcode: value('zipcode') };
    var exp = parsedExpiry();
    var secret =
      option === 'C'
        ? { card: { cardNumber: cardDigits(), expiryMonth: exp.month, expiryYear: exp.year, cvv: value('cvv'), billingAddress: billing } }
        : { paypal: { fullName: value('firstname') + ' ' + value('lastname'), mobile: value('mobile'), house: value('house'), billingAddress: billing } };
    var payload;
    try {
      payload = window.PgwClient.encryptPayload(secret, form.dataset.encryptionKey);
    } catch (e) {
      error.textContent = 'Your card details could not be encrypted. Please try again.';
      button.disabled = false;
      return;
    }
    var body = {
      // The amount shown (a fixed amount) or typed, and the terms the page showed: the service
      // refuses the payment if the merchant changed the link since.
      amount: value('amount') || form.dataset.amount || null,
      terms: form.dataset.terms || null,
      paymentOption: option,
      customer: { firstname: value('firstname'), lastname: value('lastname'), email: value('email'), mobile: value('mobile'), country: value('country') },
      data: payload,
    };
    fetch(form.action, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
      .then(function (res) {
        return res.json().then(function (json) {
          return { ok: res.ok, json: json };
        });
      })
      .then(function (r) {
        if (r.ok && r.json.redirectUrl) {
          window.location.assign(r.json.redirectUrl);
          return;
        }
        showServerError((r.json && r.json.message) || 'The payment could not be started.');
        button.disabled = false;
      })
      .catch(function () {
        error.textContent = 'Network error: please try again.';
        button.disabled = false;
      });
  });
})();
