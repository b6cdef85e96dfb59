/** What the person is told when a stop reason arrives without an error text (the turn runner usually gives one). */
const STOP_REASON_TEXT: Readonly<Record<string, string>> = {
  timeout: "the model did not answer in time",
  "tool-loop": "the agent kept calling tools without answering",
  "output-limit": "the model's answer hit the output limit and was cut off",
  error: "the turn failed",
};

/** Ends a sentence: `.`, `?`, `!` or `…`, optionally followed by closing quotes or brackets. */
const ENDS_SENTENCE = /[.?!…]["'’”)\]]*$/;

/**
 * A first word that is plain lower-case prose ("model", "the"), not a URL scheme ("http://…"), an identifier
 * (`tool-loop`, `send_file`) or a file name, which must keep its case.
 */
const PROSE_FIRST_WORD = /^[a-z]+(?=\s|[,;!?]|:(?!\/\/)|$)/;

/**
 * The one-line notice a person gets when a turn ends with a failure: `⚠️ <why>. The session is ready for your
 * next message.` Pure. `error` is the turn's error text or, without one, its stop reason. The first letter is
 * upper-cased when the text starts with a plain word; a text that already ends a sentence (`?`, `.`, `!`, `…`)
 * gets no second period (and `?.` loses its period); trailing spaces and `,;:` are dropped; an empty text reads "The turn failed".
 */
export function formatTurnNotice(error: string): string {
  const trimmed = error
    .trim()
    .replace(/[\s,;:]+$/, "")
    .replace(/([?!])\.$/, "$1");
  const text = STOP_REASON_TEXT[trimmed] ?? (trimmed.length > 0 ? trimmed : STOP_REASON_TEXT.error!);
  const sentence = PROSE_FIRST_WORD.test(text) ? text.charAt(0).toUpperCase() + text.slice(1) : text;
  const ended = ENDS_SENTENCE.test(sentence) ? sentence : `${sentence}.`;
  return `⚠️ ${ended} The session is ready for your next message.`;
}
