import { DeliveryError, lowerLimits, type ChannelFlowControl, type ChannelReceiveLimits } from "../../ahp/channel-delivery.js";
import { minimumDataMessageBytes } from "../../ahp/escaped-split.js";
import { minimumFrameBytes } from "../../ahp/frame-cursor.js";

/**
 * The most a viewer's window may be, in UTF-16 bytes: what one viewer may have in flight, about the
 * 1 MiB of unsent output an ordinary viewer may hold before it stops setting the terminal's pace.
 */
const MAX_CLIENT_WINDOW_BYTES = 2 * 1024 * 1024;
/** The largest frame sent: bigger frames deliver no faster and hold other channels' fragments back longer. */
const MAX_CLIENT_FRAME_BYTES = 256 * 1024;
/** The largest message a viewer may say it takes: the most unsent output any connection may hold (the outbox's hard bound). */
const MAX_CLIENT_MESSAGE_BYTES = 64 * 1024 * 1024;

/** The window granted to a client for its own framed messages: a megabyte in flight keeps a large paste moving. */
const HOST_WINDOW_BYTES = 1024 * 1024;
/** The largest frame taken from a client (and never more than a WebSocket frame may carry). */
const HOST_FRAME_BYTES = 64 * 1024;
/** The largest framed message taken from a client: a pasted megabyte with room for its JSON escaping. */
const HOST_MESSAGE_BYTES = 8 * 1024 * 1024;

/** Windowed subscriptions one connection may hold; more are declined (ordinary delivery). */
export const MAX_WINDOWED_CHANNELS = 64;

/** The gateway's own caps on a client's receive limits. */
export const CLIENT_RECEIVE_MAXIMA: ChannelReceiveLimits = {
  windowBytes: MAX_CLIENT_WINDOW_BYTES,
  maximumFrameBytes: MAX_CLIENT_FRAME_BYTES,
  maximumMessageBytes: MAX_CLIENT_MESSAGE_BYTES,
};

/**
 * The limits the gateway answers a windowed `subscribe` with: the client's own, lowered to the
 * gateway's maxima, and what it takes from the client (its frames kept within the WebSocket frame
 * limit `maxInboundFrameBytes`, in UTF-8 bytes: a UTF-16 unit is at most 3 of them). A frame limit
 * too small to carry a fragment, or a message limit too small to carry output, on this channel is refused.
 */
export function acceptFlowControl(channel: string, offered: ChannelReceiveLimits, maxInboundFrameBytes: number): ChannelFlowControl {
  const clientReceive = lowerLimits(offered, CLIENT_RECEIVE_MAXIMA);
  const smallest = minimumFrameBytes(channel);
  if (clientReceive.maximumFrameBytes < smallest) {
    throw new DeliveryError(`maximumFrameBytes ${clientReceive.maximumFrameBytes} cannot carry a fragment on this channel: at least ${smallest} is needed`);
  }
  const smallestMessage = minimumDataMessageBytes(channel);
  if (clientReceive.maximumMessageBytes < smallestMessage) {
    throw new DeliveryError(`maximumMessageBytes ${clientReceive.maximumMessageBytes} cannot carry output on this channel: at least ${smallestMessage} is needed`);
  }
  const hostFrameBytes = Math.max(smallest, Math.min(HOST_FRAME_BYTES, Math.floor((maxInboundFrameBytes * 2) / 3)));
  return { clientReceive, hostReceive: { windowBytes: HOST_WINDOW_BYTES, maximumFrameBytes: hostFrameBytes, maximumMessageBytes: HOST_MESSAGE_BYTES } };
}
