/* The payment-link page: the card data is encrypted here, in the browser, under the
   merchant's encryption key (RSA PKCS#1 v1.5, the same procedure as the merchant SDK),
   before it leaves the page. */
(function () {
  'use strict';
  var form = document.getElementById('pay-form');
  if (!form) return;
  var error = document.getElementById('pay-error');
  var cardFields = document.getElementById('card-fields');
  var paypalFields = document.getElementById('paypal-fields');

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

  function value(name) {
    var el = form.elements.namedItem(name);
    return el ? String(el.value).trim() : '';
  }

  form.addEventListener('submit', function (event) {
    event.preventDefault();
    error.textContent = '';
    var button = form.querySelector('button[type="submit"]');
    button.disabled = true;
    var option = selectedOption();
    var billing = { street: value('street'), city: value('city'), state: value('state'), country: value('billingCountry'), zipcode: value('zipcode') };
    var secret =
      option === 'C'
        ? {
            card: {
              cardNumber: value('cardNumber').replace(/\s+/g, ''),
              expiryMonth: value('expiryMonth'),
              expiryYear: value('expiryYear'),
              cvv: value('cvv'),
              billingAddress: billing,
            },
          }
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
      amount: value('amount') || null,
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
        error.textContent = (r.json && r.json.message) || 'The payment could not be started.';
        button.disabled = false;
      })
      .catch(function () {
        error.textContent = 'Network error: please try again.';
        button.disabled = false;
      });
  });
})();
