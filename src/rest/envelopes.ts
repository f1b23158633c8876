/**
 * The legacy interface's response envelopes, byte for byte: property order matters to
 * clients that compare bodies, so objects are built in the documented order.
 */
export function envelopeA(data: unknown, statusCode: string, message: string) {
  return { data, status: 'success', statusCode, message };
}

export function envelopeB(data: unknown, message: string, extras: { isFinalStatus: boolean; requeryNeeded: boolean; requeryType: string | null }) {
  return {
    is_final_status: extras.isFinalStatus,
    requery_needed: extras.requeryNeeded,
    requery_type: extras.requeryType,
    data,
    status: 'success',
    status_code: '00',
    message,
  };
}

/** HTTP status of each error code (documented in docs/api.md). */
export function httpStatusFor(code: string): number {
  switch (code) {
    case '401':
      return 401;
    case '403':
      return 403;
    case '13':
    case '02':
    case '404':
      return 404;
    case '409':
      return 409;
    case '422':
      return 422;
    case '413':
      return 413;
    case '415':
      return 415;
    case '500':
      return 500;
    case '503':
      return 503;
    case '51':
    case '54':
    case '14':
    case '96':
    case '61':
    case '05':
      return 402; // a declined payment: the request was fine, the money did not move
    default:
      return 400; // VAL400, 400, 100 and other validation codes
  }
}
