// The client timeouts the fault targets share. An unfaulted command through the proxy must
// answer within the client's timeout even on a busy machine (300 ms was not always enough); a
// late reply is held by the proxy until the operation has answered, so it needs no timing.

/** The client gives up on a command after this long. */
export const CLIENT_TIMEOUT_MS = 1_000;
/** A client that is to resend gets more time: a Cluster client first refreshes its view of the nodes. */
export const RESENDING_CLIENT_TIMEOUT_MS = 3_000;
/**
 * A connection whose request was dropped is cut this long after: once the client has timed out
 * on it, so that the client meets the timeout the fault stands for, not a closed connection.
 */
export const STALL_CUT_MS = CLIENT_TIMEOUT_MS + 500;
