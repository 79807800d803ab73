// Every error a client can see. The error plugin turns these into the bodies of docs/api.md, "Errors".
export type ErrorCode =
  | 'bad_request'
  | 'unauthorized'
  | 'upgrade_required'
  | 'resource_locked'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'slot_unavailable'
  | 'validation_failed'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'not_ready'
  | 'internal';

export interface FieldError {
  field: string;
  message: string;
}

export interface ErrorBody {
  error: string;
  code: ErrorCode;
  details?: FieldError[];
  upgrade?: boolean;
}

export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly extra: Partial<Pick<ErrorBody, 'details' | 'upgrade'>> = {},
  ) {
    super(message);
    this.name = 'AppError';
  }

  toBody(): ErrorBody {
    return { error: this.message, code: this.code, ...this.extra };
  }
}

export const unauthorized = () => new AppError(401, 'unauthorized', 'Unauthorized');
export const forbidden = () => new AppError(403, 'forbidden', 'Forbidden');
export const upgradeRequired = () => new AppError(403, 'upgrade_required', 'Upgrade required', { upgrade: true });
export const resourceLocked = () => new AppError(403, 'resource_locked', 'Upgrade required', { upgrade: true });
export const notFound = () => new AppError(404, 'not_found', 'Not found');
export const conflict = (message: string) => new AppError(409, 'conflict', message);
export const slotUnavailable = () => new AppError(409, 'slot_unavailable', 'Slot unavailable');
export const validationFailed = (details: FieldError[]) =>
  new AppError(422, 'validation_failed', 'Validation failed', { details });
/** A single-field 422 raised by a service rule that a schema cannot express. */
export const invalidField = (field: string, message: string) => validationFailed([{ field, message }]);
