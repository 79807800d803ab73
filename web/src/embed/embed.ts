// /embed.js placeholder (replaced by the booking pages work).
export {};
