/** Messages to every instance. */

/** Messages published to every instance sharing the store (none is kept for a later listener). */
export interface ChannelStore {
  /** Sends `message` to every subscriber of `channel`, on every instance (this one included). */
  publish(channel: string, message: string): Promise<void>;
  /**
   * Listens on `channel`: `message` gets what is published while listening; `listening(true)`
   * when listening starts (again after a reconnect: what was published meanwhile is lost),
   * `listening(false)` when it stops. Returns a function that stops listening.
   */
  subscribe(channel: string, listener: ChannelListener): () => void;
}

export interface ChannelListener {
  message(message: string): void;
  listening(listening: boolean): void;
}
