import { CursorCodec, DomainError, findById, IdPrefix, isId, keysetPage, Page } from '@crm/common';
import { CreateProductDto, ProductView, RequestContext, SortablePageQuery, UpdateProductDto } from '@crm/contracts';
import { BatchRunner } from '@crm/records';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { presentProduct, ProductsBatchWriter } from './products.batch';
import { Product } from './product.entity';

/** POST, GET, PATCH and DELETE /products: each write a batch of one through the products' writer. */
@Injectable()
export class ProductsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly cursors: CursorCodec,
    private readonly batches: BatchRunner,
    private readonly writer: ProductsBatchWriter,
  ) {}

  async create(ctx: RequestContext, dto: CreateProductDto): Promise<ProductView> {
    return (await this.batches.one(ctx, this.writer, { create: [{ index: 0, body: dto }] })) as ProductView;
  }

  async list(query: SortablePageQuery): Promise<Page<ProductView>> {
    return keysetPage(this.cursors, this.dataSource.getRepository(Product), 'p', 'products', query).read(presentProduct);
  }

  async get(id: string): Promise<ProductView> {
    const product = isId(id, IdPrefix.Product) ? await findById(this.dataSource.manager, Product, id) : null;
    if (!product) throw DomainError.notFound('product', id);
    return presentProduct(product);
  }

  async update(ctx: RequestContext, id: string, dto: UpdateProductDto): Promise<ProductView> {
    return (await this.batches.one(ctx, this.writer, { update: [{ index: 0, id, body: dto }] })) as ProductView;
  }

  async remove(ctx: RequestContext, id: string): Promise<void> {
    await this.batches.one(ctx, this.writer, { remove: [{ index: 0, id }] });
  }
}
