/**
 * The module scripts/build-pages.ts writes from this folder
 * (examples/generated/ocr-page.js), reached as "#ocr-page" through
 * examples/package.json's imports. Declared here so that type checking needs no build: the
 * generated file is not in git.
 */
export declare const html: string
export declare const scriptHash: string
export declare const styleHash: string
