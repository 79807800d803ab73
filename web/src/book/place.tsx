/** The event's place (issue 20): a link when it is a web address (a video call), else text. */
export function Place({ text }: { text: string }) {
  return /^https?:\/\/\S+$/.test(text) ? (
    <a href={text} target="_blank" rel="noopener noreferrer" class="place-link">
      {text}
    </a>
  ) : (
    <span class="place">{text}</span>
  );
}
