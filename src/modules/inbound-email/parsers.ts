// mailparser and mailauth (with joi, iconv-lite and their MIME stack) are a large share of the modules
// a process loads, and only received mail needs them: every test file and every server start that
// never sees a message paid for them. They load on the first message instead.
import type * as MailParser from 'mailparser';
import type * as MailAuth from 'mailauth';

let parser: Promise<typeof MailParser> | undefined;
let auth: Promise<typeof MailAuth> | undefined;

export const mailparser = (): Promise<typeof MailParser> => (parser ??= import('mailparser'));
export const mailauth = (): Promise<typeof MailAuth> => (auth ??= import('mailauth'));
