import { AppError } from '../errors/index.js';

/** The documents capability's error codes (stable; documented in the errors index). */
export const DocumentErrorCodes = {
  /** 404: no such document in the caller's account. */
  NOT_FOUND: 'DOCUMENT_NOT_FOUND',
  /** 415: the upload is not plain text, Markdown, HTML or PDF, or its bytes do not match its type. */
  UNSUPPORTED_TYPE: 'DOCUMENT_UNSUPPORTED_TYPE',
  /** 400: the upload carried no file (empty body, or no file part in a multipart body). */
  EMPTY_UPLOAD: 'DOCUMENT_EMPTY_UPLOAD',
  /** 400: a URL source that can never be fetched (scheme, credentials, a private or local address). */
  URL_NOT_ALLOWED: 'DOCUMENT_URL_NOT_ALLOWED',
} as const;

export const documentErrors = {
  notFound: () => new AppError(DocumentErrorCodes.NOT_FOUND, 404, 'No such document.'),
  unsupportedType: (message: string) => new AppError(DocumentErrorCodes.UNSUPPORTED_TYPE, 415, message),
  emptyUpload: () =>
    new AppError(
      DocumentErrorCodes.EMPTY_UPLOAD,
      400,
      'The upload is empty: send the file as the body or as a multipart "file" part.',
    ),
  urlNotAllowed: (message: string) => new AppError(DocumentErrorCodes.URL_NOT_ALLOWED, 400, message),
};
