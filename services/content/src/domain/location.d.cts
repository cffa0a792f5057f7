declare const folder: string;
export = folder;
