// The client timeouts the fault targets share. An unfaulted command through the proxy must
// answer within the client's timeout even on a busy machine (300 ms, then 1 s, were not always
// enough with the CPU saturated); a late reply is held by the proxy until the operation has
// answered, so it needs no timing. Cases run at once (it.concurrent), so a longer timeout costs
// one wait per wave of cases, not one per case.

/** The client gives up on a command after this long. */
export const CLIENT_TIMEOUT_MS = 2_000;
/** A client that is to resend gets more time: a Cluster client first refreshes its view of the nodes. */
export const RESENDING_CLIENT_TIMEOUT_MS = 3_000;
/**
 * The libraries' operation deadline (operationTimeoutMs) in the fault cases: above every client
 * timeout and the release that may follow one, so a case meets the client's timeout (the
 * lost-reply path it is about), not the deadline, which test/core/silent-redis.spec.ts covers.
 */
export const OPERATION_TIMEOUT_MS = 10_000;
/**
 * A connection whose request was dropped is cut this long after: once the client has timed out
 * on it, so that the client meets the timeout the fault stands for, not a closed connection.
 */
export const STALL_CUT_MS = CLIENT_TIMEOUT_MS + 500;
