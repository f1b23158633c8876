/* GraphiQL for this service: every request carries the api-key typed above (HTTP header, or
   connectionParams of the graphql-ws socket for subscriptions). The key stays in this page. */
(function () {
  'use strict';
  var keyInput = document.getElementById('api-key');
  var httpUrl = location.origin + '/graphql';
  var wsUrl = (location.protocol === 'https:' ? 'wss:' : 'ws:') + '//' + location.host + '/graphql';
  var socket = null;
  var socketKey = null;

  function apiKey() {
    return keyInput.value.trim();
  }

  function wsClient() {
    var key = apiKey();
    if (!socket || socketKey !== key) {
      if (socket) socket.dispose();
      socketKey = key;
      socket = graphqlWs.createClient({ url: wsUrl, lazy: true, connectionParams: key ? { 'api-key': key } : {} });
    }
    return socket;
  }

  function isSubscription(params) {
    var query = String(params.query || '');
    if (params.operationName) return new RegExp('subscription\\s+' + params.operationName + '\\b').test(query);
    return /^\s*subscription\b/.test(query.replace(/#[^\n]*/g, ''));
  }

  function fetcher(params, options) {
    if (params.operationName === 'IntrospectionQuery' && window.PGW_INTROSPECTION_QUERY) {
      params = Object.assign({}, params, { query: window.PGW_INTROSPECTION_QUERY });
    }
    if (isSubscription(params)) {
      return {
        subscribe: function (observer) {
          var dispose = wsClient().subscribe(params, {
            next: function (value) {
              observer.next(value);
            },
            error: function (err) {
              observer.error(err instanceof Error ? err : new Error(err && err.reason ? err.reason : 'WebSocket closed (' + (err && err.code) + ')'));
            },
            complete: function () {
              observer.complete();
            },
          });
          return { unsubscribe: dispose };
        },
      };
    }
    var headers = Object.assign({ 'content-type': 'application/json', accept: 'application/json' }, (options && options.headers) || {});
    var key = apiKey();
    if (key) headers['api-key'] = key;
    return fetch(httpUrl, { method: 'POST', headers: headers, body: JSON.stringify(params) }).then(function (response) {
      return response.json();
    });
  }

  document.getElementById('key-bar').addEventListener('submit', function (event) {
    event.preventDefault();
  });

  var defaultQuery = [
    '# Paste a test key above, then run (Ctrl-Enter).',
    '# A private key also reads orders; subscriptions accept either key.',
    '{',
    '  merchant { subsidiary { id name } environment }',
    '  paymentLinks(first: 5) { totalCount edges { node { name reference amount currency paymentLinkUrl } } }',
    '}',
    '',
  ].join('\n');

  ReactDOM.createRoot(document.getElementById('graphiql')).render(
    React.createElement(GraphiQL, { fetcher: fetcher, defaultQuery: defaultQuery, isHeadersEditorEnabled: true }),
  );
})();
