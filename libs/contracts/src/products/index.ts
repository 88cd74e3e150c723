export * from './product.dto';
export * from './line-item.dto';
